import Covenant
import CovenantTesting
import Foundation
import XCTest

private enum Locals {
  static let requestID = CoroutineLocal<String?>(default: nil)
}

/// Bindings follow their coroutine across awaits, delays, hops and shared-stack evictions, and
/// never show in another coroutine that runs on the same thread or stack.
final class CoroutineLocalIsolationTests: XCTestCase {
  func testBindingSurvivesAwaitsDelaysAndHops() {
    let (home, homeKey) = DispatchQueue.tagged("home")
    let (away, awayKey) = DispatchQueue.tagged("away")
    let seen = Recorder<String>()
    let promise = CoPromise<Int>()
    coRun(on: home) {
      try Locals.requestID.withValue("r1") {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
          promise.success(1)
        }
        _ = try promise.await()
        seen.append("after await: \(Locals.requestID.value ?? "nil")")
        try Coroutine.delay(.milliseconds(2))
        seen.append("after delay: \(Locals.requestID.value ?? "nil")")
        try away.await {
          XCTAssertEqual(DispatchQueue.getSpecific(key: awayKey), "away")
          seen.append("hopped: \(Locals.requestID.value ?? "nil")")
        }
        XCTAssertEqual(DispatchQueue.getSpecific(key: homeKey), "home")
        seen.append("back: \(Locals.requestID.value ?? "nil")")
      }
    }
    XCTAssertEqual(
      seen.elements, ["after await: r1", "after delay: r1", "hopped: r1", "back: r1"])
  }

  func testCoroutinesTakingTurnsOnOneThreadSeeOnlyTheirOwn() {
    // Two coroutines on one serial queue hand off to each other: each suspends inside its
    // binding while the other runs on the same thread; a third, started meanwhile, has none.
    let queue = DispatchQueue(label: "turns")
    let seen = Recorder<String>()
    let (toA, toB, toAAgain) = (CoPromise<Void>(), CoPromise<Void>(), CoPromise<Void>())
    let done = DispatchGroup()
    done.enter()
    queue.startCoroutine {
      try Locals.requestID.withValue("a") {
        _ = try toA.await()
        seen.append("a: \(Locals.requestID.value ?? "nil")")
        toB.success(())
        _ = try toAAgain.await()
        seen.append("a: \(Locals.requestID.value ?? "nil")")
      }
      done.leave()
    }
    done.enter()
    queue.startCoroutine {
      try Locals.requestID.withValue("b") {
        toA.success(())
        _ = try toB.await()
        seen.append("b: \(Locals.requestID.value ?? "nil")")
        queue.startCoroutine {
          seen.append("third: \(Locals.requestID.value ?? "nil")")
          toAAgain.success(())
        }
      }
      seen.append("b after: \(Locals.requestID.value ?? "nil")")
      done.leave()
    }
    XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    XCTAssertEqual(
      seen.elements, ["a: a", "b: b", "b after: nil", "third: b", "a: a"],
      "the third was started inside b's binding, so it inherits it")
  }

  func testManyCoroutinesOnAConcurrentQueueKeepTheirOwn() {
    let count = TestScale.stress(2_000)
    let mismatches = Locked(0)
    let done = DispatchGroup()
    for index in 0..<count {
      done.enter()
      DispatchQueue.global().startCoroutine {
        Locals.requestID.withValue("c\(index)") {
          for _ in 0..<3 {
            try? Coroutine.yield()
            if Locals.requestID.value != "c\(index)" { mismatches.withLock { $0 += 1 } }
          }
        }
        if Locals.requestID.value != nil { mismatches.withLock { $0 += 1 } }
        done.leave()
      }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
    XCTAssertEqual(mismatches.withLock { $0 }, 0)
  }

  func testBindingSurvivesSharedStackEvictions() {
    // One shared stack for the queue: the coroutines evict each other's frames at every turn,
    // and one resumes on another thread's queue after a hop.
    let queue = DispatchQueue(label: "one-stack")
    queue.coroutineSharedStackMode()
    let seen = Recorder<String>()
    let done = DispatchGroup()
    for index in 0..<8 {
      done.enter()
      queue.startCoroutine {
        Locals.requestID.withValue("s\(index)") {
          var frame = [UInt8](repeating: UInt8(index), count: 256)  // frames worth copying
          for round in 0..<4 {
            try? Coroutine.yield()
            if round == 2 { try? DispatchQueue.global().await {} }
            frame[round] &+= 1
            seen.append("\(index) \(Locals.requestID.value ?? "nil") \(frame[255])")
          }
        }
        done.leave()
      }
    }
    XCTAssertEqual(done.wait(timeout: .now() + 20), .success)
    XCTAssertEqual(seen.count, 32)
    for entry in seen.elements {
      let parts = entry.split(separator: " ")
      XCTAssertEqual("s\(parts[0])", String(parts[1]), entry)
      XCTAssertEqual(parts[0], parts[2], entry)
    }
  }

  func testAThreadBindingDoesNotReachCoroutinesStartedElsewhere() {
    let queue = DispatchQueue(label: "elsewhere")
    let seen = Box<String??>(nil)
    let started = DispatchSemaphore(value: 0)
    let go = CoPromise<Void>()
    queue.startCoroutine {
      started.signal()
      _ = try go.await()
      seen.value = .some(Locals.requestID.value)
    }
    started.wait()
    Locals.requestID.withValue("this thread") { go.success(()) }  // resumed from in here
    queue.sync {}
    XCTAssertEqual(seen.value, .some(nil))
  }

  func testAResolutionInsideABindingResumesTheAwaiterWithItsOwn() {
    // A coroutine started on the immediate scheduler resumes on the thread that fulfils its
    // future, inside that thread's binding: it still sees its own (none).
    let seen = Box<String??>(nil)
    let promise = CoPromise<Void>()
    Coroutine.start {
      _ = try promise.await()
      seen.value = .some(Locals.requestID.value)
    }
    Locals.requestID.withValue("resolver") { promise.success(()) }
    XCTAssertEqual(seen.value, .some(nil))
  }
}

extension DispatchQueue {
  /// Makes this queue's coroutines share one stack, so that they evict each other.
  fileprivate func coroutineSharedStackMode() {
    coroutineStackMode = .shared
    coroutineSharedStackCount = 1
  }
}
