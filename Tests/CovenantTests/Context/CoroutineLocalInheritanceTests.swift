import Covenant
import CovenantTesting
import Foundation
import XCTest

private enum Locals {
  static let requestID = CoroutineLocal<String?>(default: nil)
}

/// Every way to start a coroutine from inside one inherits the bindings in force at the start,
/// and only those.
final class CoroutineLocalInheritanceTests: XCTestCase {
  /// Starts a coroutine with `start` inside a coroutine that has bound "parent", and returns
  /// what the child read.
  private func childReads(
    _ start: @escaping @Sendable (_ report: @escaping @Sendable (String?) -> Void) throws -> Void
  ) -> String?? {
    let seen = Box<String??>(nil)
    let done = DispatchSemaphore(value: 0)
    DispatchQueue(label: "parent").startCoroutine {
      try Locals.requestID.withValue("parent") {
        try start { value in
          seen.value = .some(value)
          done.signal()
        }
      }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the child did not report")
    return seen.value
  }

  func testStartCoroutineInherits() {
    XCTAssertEqual(
      childReads { report in
        DispatchQueue(label: "child").startCoroutine { report(Locals.requestID.value) }
      }, "parent")
  }

  func testStartCoroutineOnAnotherKindOfSchedulerInherits() {
    let operations = OperationQueue()
    XCTAssertEqual(
      childReads { report in operations.startCoroutine { report(Locals.requestID.value) } },
      "parent")
  }

  func testCoroutineFutureInherits() {
    XCTAssertEqual(
      childReads { report in
        let future = DispatchQueue.global().coroutineFuture { Locals.requestID.value }
        report(try future.await())
      }, "parent")
  }

  func testCoFutureTaskInherits() {
    XCTAssertEqual(
      childReads { report in
        let future = CoFuture<String?> { Locals.requestID.value }
        report(try future.await())
      }, "parent")
  }

  func testCoroutineStartInherits() {
    XCTAssertEqual(
      childReads { report in Coroutine.start { report(Locals.requestID.value) } }, "parent")
  }

  func testCoroutineInAScopeInherits() {
    let scope = CoScope()
    XCTAssertEqual(
      childReads { report in
        DispatchQueue.global().startCoroutine(in: scope) { report(Locals.requestID.value) }
      }, "parent")
    withExtendedLifetime(scope) {}
  }

  func testActorInherits() {
    XCTAssertEqual(
      childReads { report in
        let actor = DispatchQueue(label: "actor").actor(of: Int.self) { receiver in
          for _ in receiver.makeIterator() { report(Locals.requestID.value) }
        }
        try actor.awaitSend(1)
        actor.close()
      }, "parent")
  }

  func testLazyGeneratorBodyInherits() {
    XCTAssertEqual(
      childReads { report in
        let generator = Generator<String?> { yield in try yield(Locals.requestID.value) }
        Locals.requestID.withValue("consumer") {
          report(generator.next() ?? "ended")
        }
      }, "parent")
  }

  func testStartedOutsideAnyCoroutineInheritsTheThreadsBindings() {
    let seen = Box<String?>(nil)
    let done = DispatchSemaphore(value: 0)
    Locals.requestID.withValue("thread") {
      DispatchQueue.global().startCoroutine {
        seen.value = Locals.requestID.value
        done.signal()
      }
    }
    done.wait()
    XCTAssertEqual(seen.value, "thread")
  }

  func testTheChildSeesTheBindingsAtItsStartNotLaterOnes() throws {
    let scheduler = TestScheduler()
    let seen = Recorder<String>()
    scheduler.startCoroutine {
      try Locals.requestID.withValue("at start") {
        scheduler.startCoroutine {
          try Coroutine.yield()  // the parent rebinds meanwhile
          seen.append("child: \(Locals.requestID.value ?? "nil")")
          try Locals.requestID.withValue("child's own") { try Coroutine.yield() }
        }
        try Locals.requestID.withValue("later") {
          try Coroutine.yield()
          try Coroutine.yield()
          seen.append("parent: \(Locals.requestID.value ?? "nil")")
        }
      }
    }
    scheduler.run()
    XCTAssertEqual(seen.elements.sorted(), ["child: at start", "parent: later"])
  }

  func testDeepInheritanceSharesOneList() {
    // Ten generations, each binding on top of what it inherited.
    let depth = CoroutineLocal<Int>(default: 0)
    let seen = Box<Int>(-1)
    let done = DispatchSemaphore(value: 0)
    @Sendable func generation(_ remaining: Int) {
      DispatchQueue.global().startCoroutine {
        depth.withValue(depth.value + 1) {
          if remaining == 0 {
            seen.value = depth.value
            done.signal()
          } else {
            generation(remaining - 1)
          }
        }
      }
    }
    generation(9)
    done.wait()
    XCTAssertEqual(seen.value, 10)
  }
}
