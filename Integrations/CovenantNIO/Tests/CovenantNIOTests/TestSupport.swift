import CovenantNIO
import Dispatch
import Foundation
import XCTest

/// A generous bound that only turns a hang into a failure; no test relies on timing.
let hangGuard: DispatchTimeInterval = .seconds(60)

struct TimedOut: Error {}

/// Waits (off any event loop) for `future` and returns its outcome; fails the test instead of
/// hanging forever.
func outcome<T>(
  of future: CoFuture<T>, file: StaticString = #filePath, line: UInt = #line
) -> Result<T, any Error> {
  let done = DispatchSemaphore(value: 0)
  future.whenComplete { _ in done.signal() }
  guard done.wait(timeout: .now() + hangGuard) == .success, let result = future.result else {
    XCTFail("future did not complete", file: file, line: line)
    return .failure(TimedOut())
  }
  return result
}

/// The value of `future`, failing the test on error or hang.
func value<T>(of future: CoFuture<T>, file: StaticString = #filePath, line: UInt = #line) -> T? {
  switch outcome(of: future, file: file, line: line) {
  case .success(let value): return value
  case .failure(let error):
    XCTFail("unexpected error \(error)", file: file, line: line)
    return nil
  }
}

/// An object whose deallocation tests can observe through a weak reference.
final class Tracked: @unchecked Sendable {}

struct TestError: Error, Equatable {}
