import Covenant
import Dispatch
import Foundation
import XCTest

/// Helpers shared by the future, channel, select and scope tests.
extension XCTestCase {
  /// Starts `body` as a coroutine on `queue` and waits (blocking this thread) until it ends;
  /// an error it throws fails the test.
  func coRun(
    on queue: DispatchQueue = DispatchQueue(label: "coRun"), timeout: TimeInterval = 20,
    file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable () throws -> Void
  ) {
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      do { try body() } catch { XCTFail("coroutine threw \(error)", file: file, line: line) }
      done.signal()
    }
    XCTAssertEqual(
      done.wait(timeout: .now() + timeout), .success, "coroutine did not finish",
      file: file, line: line)
  }

  /// Starts `body` as a coroutine on a serial queue, calls `resolve` on this thread once the
  /// coroutine has run up to its first suspension (the queue has nothing left to run), then
  /// waits (blocking) until the body has ended. For tests of a coroutine resumed from another
  /// thread while it waits: `resolve` comes after the suspension by construction, not after a
  /// guess of how long the coroutine takes to get there.
  func coRun(
    resolvingWhileSuspended resolve: () -> Void, timeout: TimeInterval = 20,
    file: StaticString = #filePath, line: UInt = #line,
    _ body: @escaping @Sendable () throws -> Void
  ) {
    let queue = DispatchQueue(label: "coRun")
    let done = DispatchSemaphore(value: 0)
    queue.startCoroutine {
      do { try body() } catch { XCTFail("coroutine threw \(error)", file: file, line: line) }
      done.signal()
    }
    queue.sync {}  // the coroutine's first slice has ended: it waits
    resolve()
    XCTAssertEqual(
      done.wait(timeout: .now() + timeout), .success, "coroutine did not finish",
      file: file, line: line)
  }

  /// Waits until `condition` holds (polling), failing the test after `timeout`.
  func waitUntil(
    timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
  ) {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() {
      if Date() > deadline {
        XCTFail("condition not met in \(timeout) s", file: file, line: line)
        return
      }
      usleep(200)
    }
  }
}

/// A serial queue on which started coroutines run until they suspend before `flush()` returns.
struct CoQueue: @unchecked Sendable {  // DispatchQueue is thread-safe
  let queue: DispatchQueue

  init(_ label: String = "CoQueue") { queue = DispatchQueue(label: label) }

  /// Starts `body` as a coroutine; errors are recorded in `errors` if given.
  func start(
    errors: Recorder<String>? = nil, _ body: @escaping @Sendable () throws -> Void
  ) {
    queue.startCoroutine {
      do { try body() } catch { errors?.append("\(error)") }
    }
  }

  /// Returns once everything queued so far (coroutine slices included) has run.
  func flush() { queue.sync {} }
}

/// Whether `error` is the given `CoChannelError`.
func isChannelError(_ error: (any Error)?, _ expected: CoChannelError) -> Bool {
  (error as? CoChannelError) == expected
}

/// Whether `error` is the given `CoFutureError`.
func isFutureError(_ error: (any Error)?, _ expected: CoFutureError) -> Bool {
  (error as? CoFutureError) == expected
}
