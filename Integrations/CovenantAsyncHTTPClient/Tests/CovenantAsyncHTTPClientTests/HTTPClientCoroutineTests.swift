import AsyncHTTPClient
import CovenantAsyncHTTPClient
import CovenantCore
import Dispatch
import NIOCore
import NIOHTTP1
import XCTest

/// AsyncHTTPClient's requests awaited in coroutines, against a real local server: the response,
/// and cancellation by timeout, by the coroutine's scope and by the future, each seen by the
/// server as a closed connection.
final class HTTPClientCoroutineTests: XCTestCase {
  private var server: LocalHTTPServer!
  private var client: HTTPClient!
  private let queue = DispatchQueue(label: "HTTPClientCoroutineTests", attributes: .concurrent)

  override func setUpWithError() throws {
    server = try LocalHTTPServer()
    client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
  }

  override func tearDownWithError() throws {
    try client.syncShutdown()
    try server.stop()
  }

  /// Runs `body` as a coroutine on the test's queue and waits for its outcome.
  private func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    try outcome(of: queue.coroutineFuture(body))
  }

  /// Waits for `future` to complete (at most 20 s, a bound against a hang), then returns its
  /// value or throws its error.
  private func outcome<T>(of future: CoFuture<T>) throws -> T {
    let done = DispatchSemaphore(value: 0)
    future.whenComplete { _ in done.signal() }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "the future did not complete")
    return try XCTUnwrap(future.result).get()
  }

  func testAwaitReturnsTheResponse() throws {
    let client = self.client!
    let request = try HTTPClient.Request(url: server.url("/hello"))
    let (status, body) = try run { () throws -> (HTTPResponseStatus, String) in
      let response = try client.await(request, timeout: .seconds(10))
      return (response.status, response.body.map { String(buffer: $0) } ?? "")
    }
    XCTAssertEqual(status, .ok)
    XCTAssertEqual(body, "hello")
  }

  func testANotFoundIsAResponse() throws {
    let client = self.client!
    let request = try HTTPClient.Request(url: server.url("/missing"))
    let status = try run { try client.await(request).status }
    XCTAssertEqual(status, .notFound)
  }

  func testExecuteFutureCompletesOutsideACoroutine() throws {
    let response = client.executeFuture(try HTTPClient.Request(url: server.url("/hello")))
    XCTAssertEqual(try outcome(of: response).body.map { String(buffer: $0) }, "hello")
  }

  func testATimeoutCancelsTheRequest() throws {
    let client = self.client!
    let request = try HTTPClient.Request(url: server.url("/hang"))
    let outcome = try run { () -> String in
      do {
        _ = try client.await(request, timeout: .milliseconds(200))
        return "returned"
      } catch {
        return "\(error)"
      }
    }
    XCTAssertEqual(outcome, "timeout")
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
  }

  func testCancellingTheCoroutinesScopeCancelsTheRequest() throws {
    let client = self.client!
    let request = try HTTPClient.Request(url: server.url("/hang"))
    let scope = CoScope()
    let outcome = CoPromise<String>()
    queue.startCoroutine(in: scope) {
      do {
        _ = try client.await(request)
        outcome.success("returned")
      } catch {
        outcome.success("\(error)")
      }
    }
    XCTAssertTrue(server.waitForHangingRequest())
    scope.cancel()
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
    XCTAssertEqual(try self.outcome(of: outcome), "canceled")
    try scope.join()
  }

  func testCancellingTheFutureCancelsTheRequest() throws {
    let response = client.executeFuture(try HTTPClient.Request(url: server.url("/hang")))
    XCTAssertTrue(server.waitForHangingRequest())
    response.cancel()
    XCTAssertTrue(server.waitForClosedHang(), "the server never saw the connection close")
    XCTAssertThrowsError(try response.result?.get()) { XCTAssertTrue($0.isCancellation) }
  }

  func testACancelledCoroutineSendsNothing() throws {
    let client = self.client!
    let request = try HTTPClient.Request(url: server.url("/hang"))
    let scope = CoScope()
    let outcome = CoPromise<String>()
    queue.startCoroutine(in: scope) {
      scope.cancel()
      do {
        _ = try client.await(request)
        outcome.success("returned")
      } catch {
        outcome.success("\(error)")
      }
    }
    XCTAssertEqual(try self.outcome(of: outcome), "canceled")
    XCTAssertFalse(server.waitForHangingRequest(timeout: 0.2), "a request was sent")
  }

  func testAwaitOutsideACoroutineSendsNothing() throws {
    let request = try HTTPClient.Request(url: server.url("/hang"))
    XCTAssertThrowsError(try client.await(request)) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
    XCTAssertFalse(server.waitForHangingRequest(timeout: 0.2), "a request was sent")
  }
}
