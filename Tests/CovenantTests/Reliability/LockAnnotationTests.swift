import CCovenantShims
import Covenant
import CovenantCore
import CovenantTesting
import Dispatch
import XCTest

/// Covenant's critical sections (`InlineMutex.withCriticalSection`) and ThreadSanitizer.
///
/// Every section is bracketed with `cov_sync_acquire` / `cov_sync_release`, annotations compiled
/// in only when the C target is built with TSan. If a build ever ran under TSan without them (say
/// SwiftPM stopped passing the sanitizer flag to C targets), the suite would rely on TSan seeing
/// the lock itself: fail here, with the reason, instead. Under TSan, the hand-over test below
/// fails with a race report unless TSan orders every critical section after the previous one.
final class LockAnnotationTests: XCTestCase {
  func testLockAnnotationsAreOnExactlyUnderThreadSanitizer() {
    XCTAssertEqual(
      cov_sync_annotations_enabled != 0, TestScale.runsUnderThreadSanitizer,
      "the C target and the process disagree about ThreadSanitizer")
  }

  /// Threads take turns in critical sections that update memory the lock does not hold (a plain
  /// field of a class the protected value points to): only the lock orders those writes, so
  /// under TSan a hand-over it did not see is a race report on `Tally.count`.
  func testContendedHandOversOrderTheSections() {
    let tally = Tally()
    let protected = InlineMutex(tally)
    let threads = 4
    let rounds = TestScale.stress(5_000)
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      for _ in 0..<rounds {
        protected.withCriticalSection { $0.count += 1 }
      }
    }
    XCTAssertEqual(protected.withCriticalSection { $0.count }, threads * rounds)
  }

  /// A coroutine takes critical sections on both sides of suspensions that resume it on other
  /// threads (hops to a concurrent queue and back), in the shape `withCriticalSection` is kept
  /// out of line for. A lock that remembered the thread of the section before the suspension
  /// traps here ("Recursive call to lock", "unlock … on a thread which hasn't acquired the lock"),
  /// in optimized builds.
  func testCriticalSectionsAroundSuspensionsOnOtherThreads() throws {
    let state = LockedCounter()
    let hops = TestScale.stress(200)
    let workers = DispatchQueue(label: "LockAnnotationTests.workers", attributes: .concurrent)
    let future = DispatchQueue.global().coroutineFuture { () -> Int in
      for _ in 0..<hops {
        state.bump()
        try workers.await { state.bump() }  // suspends; resumes on a thread of `.global()`
        state.bump()
      }
      return state.value
    }
    XCTAssertEqual(try wait(for: future, timeout: 60), 3 * hops)
  }
}

private final class Tally: @unchecked Sendable {
  var count = 0  // written only inside critical sections
}

/// A counter whose every access is a critical section of the library's lock.
private final class LockedCounter: Sendable {
  private let counter = InlineMutex(0)
  func bump() { counter.withCriticalSection { $0 += 1 } }
  var value: Int { counter.withCriticalSection { $0 } }
}
