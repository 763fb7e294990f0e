import Covenant
import XCTest

final class PromiseRecoverTests: PromiseTestCase {
  func testFulfilledPathSkipsRecovery() throws {
    let ran = Recorder<Bool>()
    let source = Promise<Int>()
    let derived = source.recover(on: queue.queue) { _ -> Int in
      ran.append(true)
      return 0
    }
    source.fulfill(3)
    XCTAssertEqual(try wait(for: derived, timeout: 2), 3)
    XCTAssertEqual(ran.count, 0)
  }

  func testRejectedPathRecoversWithValue() throws {
    let source = Promise<Int>()
    let derived = source.recover(on: queue.queue) { ($0 as! TestError).id * 10 }
    source.reject(TestError(4))
    XCTAssertEqual(try wait(for: derived, timeout: 2), 40)
  }

  func testRejectedPathRecoversWithPromise() throws {
    let derived = Promise<Int>(TestError(4)).recover(on: queue.queue) { _ in Promise(7) }
    XCTAssertEqual(try wait(for: derived, timeout: 2), 7)
  }

  func testRecoveryPromiseMayReject() {
    let derived = Promise<Int>(TestError(1)).recover(on: queue.queue) { _ in
      Promise<Int>(TestError(2))
    }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(2))
  }

  func testAlreadyResolvedSource() throws {
    let recovered = Promise<Int>(TestError()).recover(on: .main) { _ in 1 }
    XCTAssertTrue(recovered.isPending, "ran inline")
    XCTAssertEqual(try wait(for: recovered, timeout: 2), 1)
  }

  func testThrowingRecoveryRejects() {
    let derived = Promise<Int>(TestError(1)).recover(on: queue.queue) { _ -> Int in
      throw TestError(2)
    }
    let derivedPromiseForm = Promise<Int>(TestError(1)).recover(on: queue.queue) {
      _ -> Promise<Int> in throw TestError(3)
    }
    settle()
    XCTAssertEqual(derived.error as? TestError, TestError(2))
    XCTAssertEqual(derivedPromiseForm.error as? TestError, TestError(3))
  }

  func testBlockRunsOnGivenQueue() {
    let onQueue = Recorder<Bool>()
    let q = queue
    Promise<Int>(TestError()).recover(on: q.queue) { _ in
      onQueue.append(q.isCurrent)
      return 1
    }
    settle()
    XCTAssertEqual(onQueue.elements, [true])
  }

  func testDerivedPromiseLivesUntilResolvedThenIsReleased() {
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) {
      $0.recover(on: queue.queue) { _ in 1 }
    }
    checkDerivedLifetime(resolving: { $0.reject(TestError()) }) {
      $0.recover(on: queue.queue) { _ in Promise(1) }
    }
  }
}
