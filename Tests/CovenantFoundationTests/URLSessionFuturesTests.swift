import Covenant
import CovenantTesting
import Foundation
import XCTest

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `URLSession`'s futures against `LocalHTTPServer`, a real server on 127.0.0.1: the values, and
/// every way of cancelling, seen by the server as a closed connection.
final class URLSessionFuturesTests: XCTestCase {
  private var server: LocalHTTPServer!
  private var session: URLSession!
  private let queue = DispatchQueue(label: "URLSessionFuturesTests", attributes: .concurrent)

  override func setUpWithError() throws {
    server = try LocalHTTPServer()
    session = URLSession(configuration: .ephemeral)
  }

  override func tearDown() {
    session.invalidateAndCancel()
    server.stop()
  }

  // MARK: Values

  func testDataTaskFutureForAURLAwaitedInACoroutine() throws {
    let url = server.url("/hello")
    let session = self.session!
    let (body, status) = try runCoroutine(on: queue) { () throws -> (String, Int) in
      let (data, response) = try session.dataTaskFuture(for: url).await()
      return (
        String(decoding: data, as: UTF8.self), (response as? HTTPURLResponse)?.statusCode ?? 0
      )
    }
    XCTAssertEqual(body, "hello")
    XCTAssertEqual(status, 200)
  }

  func testDataTaskFutureForARequestOutsideACoroutine() throws {
    var request = URLRequest(url: server.url("/missing"))
    request.httpMethod = "GET"
    let (data, response) = try wait(for: session.dataTaskFuture(for: request))
    XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 404)  // a response, not an error
    XCTAssertEqual(String(decoding: data, as: UTF8.self), "no such route")
  }

  func testUploadTaskFutureFromData() throws {
    var request = URLRequest(url: server.url("/echo"))
    request.httpMethod = "POST"
    let payload = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let (data, response) = try wait(for: session.uploadTaskFuture(for: request, from: payload))
    XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
    XCTAssertEqual(data, payload)
  }

  func testUploadTaskFutureFromAFile() throws {
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("URLSessionFuturesTests-\(UUID().uuidString)")
    let payload = Data("from a file\n".utf8)
    try payload.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    var request = URLRequest(url: server.url("/echo"))
    request.httpMethod = "POST"
    let (data, _) = try wait(for: session.uploadTaskFuture(for: request, fromFile: file))
    XCTAssertEqual(data, payload)
  }

  func testDownloadTaskFutureKeepsTheFileForTheCaller() throws {
    let (url, response) = try wait(for: session.downloadTaskFuture(for: server.url("/bytes/5000")))
    defer { try? FileManager.default.removeItem(at: url) }
    XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
    let contents = try Data(contentsOf: url)  // still there after the handler returned
    XCTAssertEqual(contents.count, 5000)
    XCTAssertEqual(contents.prefix(12), Data("012345678901".utf8))
    XCTAssertTrue(url.lastPathComponent.hasPrefix("CovenantDownload-"))
  }

  func testAFutureNobodyKeepsStillCompletes() throws {
    let done = DispatchSemaphore(value: 0)
    let body = Box<String?>(nil)
    session.dataTaskFuture(for: server.url("/hello")).whenSuccess { data, _ in
      body.value = String(decoding: data, as: UTF8.self)
      done.signal()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(body.value, "hello")
  }

  func testAConnectionRefusedFailsWithURLSessionsError() throws {
    let closedPort = server.port
    server.stop()
    let url = URL(string: "http://127.0.0.1:\(closedPort)/hello")!
    XCTAssertThrowsError(try wait(for: session.dataTaskFuture(for: url))) { error in
      XCTAssertTrue(error is URLError, "\(error)")
      XCTAssertFalse(error.isCancellation)
    }
  }

  // MARK: Cancellation reaches the server

  func testCancellingTheFutureClosesTheConnection() throws {
    let future = session.dataTaskFuture(for: server.url("/hang"))
    XCTAssertTrue(server.waitForHangingRequest())
    future.cancel()
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
    XCTAssertThrowsError(try wait(for: future)) { XCTAssertEqual($0 as? CoFutureError, .canceled) }
  }

  func testCancellingTheScopeOfTheAwaitingCoroutineClosesTheConnection() throws {
    let scope = CoScope()
    let outcome = CoPromise<String>()
    let session = self.session!
    let url = server.url("/hang")
    queue.startCoroutine(in: scope) {
      do {
        _ = try session.dataTaskFuture(for: url).await()
        outcome.success("returned")
      } catch {
        outcome.success("\(error)")
        throw error
      }
    }
    XCTAssertTrue(server.waitForHangingRequest())
    scope.cancel()
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
    XCTAssertEqual(try wait(for: outcome), "canceled")
    try scope.join()
  }

  func testCancellingTheAwaitingCoroutinesFutureClosesTheConnection() throws {
    let session = self.session!
    let url = server.url("/hang")
    let work = queue.coroutineFuture { try session.dataTaskFuture(for: url).await() }
    XCTAssertTrue(server.waitForHangingRequest())
    work.cancel()  // cancels the coroutine, which ends at its await
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
    try work.join()
  }

  func testATimeoutThatCancelsClosesTheConnection() throws {
    let session = self.session!
    let url = server.url("/hang")
    let outcome = queue.coroutineFuture { () throws -> String in
      do {
        _ = try session.dataTaskFuture(for: url).await(
          timeout: .milliseconds(50), cancelOnTimeout: true)
        return "returned"
      } catch CoFutureError.timeout {
        return "timed out"
      }
    }
    XCTAssertEqual(try wait(for: outcome), "timed out")
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
  }

  func testATimeoutThatDoesNotCancelLeavesTheRequestRunning() throws {
    let session = self.session!
    let url = server.url("/hang")
    let request = CoPromise<CoFuture<URLSession.DataResponse>>()
    let outcome = queue.coroutineFuture { () throws -> String in
      let future = session.dataTaskFuture(for: url)
      request.success(future)
      do {
        _ = try future.await(timeout: .milliseconds(20))
        return "returned"
      } catch CoFutureError.timeout {
        return "timed out"
      }
    }
    XCTAssertEqual(try wait(for: outcome), "timed out")
    let future = try wait(for: request)
    XCTAssertTrue(server.waitForHangingRequest())
    XCTAssertNil(future.result, "the request runs on after the timeout")
    XCTAssertEqual(server.hangCounts.closed, 0)
    future.cancel()
    XCTAssertTrue(server.waitForClosedHang())
  }

  func testACancelledCoroutineSendsNoRequest() throws {
    let session = self.session!
    let url = server.url("/hello")
    let scope = CoScope()
    let outcome = CoPromise<String>()
    queue.startCoroutine(in: scope) {
      scope.cancel()  // cancelled while running: its next awaits throw at once
      let future = session.dataTaskFuture(for: url)
      outcome.success(future.isCanceled ? "not sent" : "sent")
    }
    XCTAssertEqual(try wait(for: outcome), "not sent")
    _ = try wait(for: session.dataTaskFuture(for: url))  // one request, from here
    XCTAssertEqual(server.requestCount, 1)
  }

  /// A coroutine that ends normally leaves its requests alone; each completed request takes its
  /// hook out of the coroutine, so a coroutine that makes many keeps none of them.
  func testACoroutineThatIsNotCancelledLeavesItsRequestsAndKeepsNoHook() throws {
    let session = self.session!
    let url = server.url("/hello")
    let loaded = CoPromise<Int>()
    let gate = CoPromise<Void>()
    let work = queue.coroutineFuture { () throws -> Void in
      var total = 0
      for _ in 0..<5 { total += try session.dataTaskFuture(for: url).await().data.count }
      loaded.success(total)
      try gate.await()
    }
    XCTAssertEqual(try wait(for: loaded), 25)
    XCTAssertEqual(work.coroutineFinishCallbackCount, 0, "a completed request left its hook")
    gate.success(())
    try wait(for: work)

    let unawaited = CoPromise<CoFuture<URLSession.DataResponse>>()
    try wait(for: queue.coroutineFuture { unawaited.success(session.dataTaskFuture(for: url)) })
    let (data, _) = try wait(for: wait(for: unawaited))  // its coroutine ended first
    XCTAssertEqual(String(decoding: data, as: UTF8.self), "hello")
  }
}

/// A value shared with a callback on another thread, under a lock.
final class Box<T>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: T
  init(_ value: T) { stored = value }
  var value: T {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
}
