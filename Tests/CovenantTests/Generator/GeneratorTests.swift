import Covenant
import Dispatch
import XCTest

private struct GeneratorTestError: Error, Equatable {}

private final class Tracked: @unchecked Sendable {}

final class GeneratorTests: XCTestCase {
  func testYieldsInOrderThenEnds() {
    let g = Generator<Int> { yield in
      try yield(1)
      try yield(2)
      try yield(3)
    }
    XCTAssertEqual(g.next(), 1)
    XCTAssertEqual(g.next(), 2)
    XCTAssertEqual(g.next(), 3)
    XCTAssertNil(g.next())
    XCTAssertNil(g.next())
    XCTAssertTrue(g.isFinished)
    XCTAssertNil(g.error)
  }

  func testIsASequence() {
    let g = Generator<String> { yield in
      for word in ["a", "b", "c"] { try yield(word) }
    }
    XCTAssertEqual(Array(g), ["a", "b", "c"])
  }

  func testEmptyBody() {
    let g = Generator<Int> { _ in }
    XCTAssertNil(g.next())
    XCTAssertEqual(Array(g), [])
  }

  func testLazinessRunsOnlyAsFarAsConsumed() {
    var log: [String] = []
    let g = Generator<Int> { yield in
      log.append("start")
      for i in 0..<5 {
        log.append("before \(i)")
        try yield(i)
        log.append("after \(i)")
      }
      log.append("end")
    }
    XCTAssertEqual(log, [], "nothing runs before next()")
    XCTAssertEqual(g.next(), 0)
    XCTAssertEqual(log, ["start", "before 0"])
    XCTAssertEqual(g.next(), 1)
    XCTAssertEqual(log, ["start", "before 0", "after 0", "before 1"])
    withExtendedLifetime(g) {}
  }

  func testInfiniteGeneratorWithPrefix() {
    let naturals = Generator<Int> { yield in
      var i = 0
      while true {
        try yield(i)
        i += 1
      }
    }
    XCTAssertEqual(Array(naturals.prefix(5)), [0, 1, 2, 3, 4])
    // Single pass: the generator goes on where it stopped.
    XCTAssertEqual(naturals.next(), 5)
  }

  func testOneMillionElements() {
    let count = TestScale.stress(1_000_000)
    let g = Generator<Int> { yield in
      for i in 0..<count { try yield(i) }
    }
    var sum = 0
    var seen = 0
    for value in g {
      sum &+= value
      seen += 1
    }
    XCTAssertEqual(seen, count)
    XCTAssertEqual(sum, count * (count - 1) / 2)
  }

  func testErrorReachesConsumer() {
    let g = Generator<Int> { yield in
      try yield(1)
      throw GeneratorTestError()
    }
    XCTAssertEqual(try g.nextElement(), 1)
    XCTAssertThrowsError(try g.nextElement()) { error in
      XCTAssertEqual(error as? GeneratorTestError, GeneratorTestError())
    }
    XCTAssertNil(try g.nextElement(), "the error is thrown once, then the sequence is over")
    XCTAssertNil(g.next())
    XCTAssertEqual(g.error as? GeneratorTestError, GeneratorTestError())
    XCTAssertTrue(g.isFinished)
  }

  func testNextReturnsNilAfterErrorAndKeepsIt() {
    let g = Generator<Int> { yield in
      try yield(1)
      throw GeneratorTestError()
    }
    XCTAssertEqual(Array(g), [1])
    XCTAssertEqual(g.error as? GeneratorTestError, GeneratorTestError())
  }

  func testEarlyDropReleasesCapturesAndRunsDefer() {
    weak var weakCapture: Tracked?
    weak var weakLocal: Tracked?
    var deferRan = false
    var ranPastYield = false
    do {
      let captured = Tracked()
      weakCapture = captured
      let g = Generator<Int> { yield in
        let local = Tracked()
        weakLocal = local
        defer { deferRan = true }
        try yield(1)
        withExtendedLifetime((captured, local)) {}
        ranPastYield = true
        try yield(2)
      }
      XCTAssertEqual(g.next(), 1)
      XCTAssertNotNil(weakCapture)
      XCTAssertNotNil(weakLocal)
      XCTAssertFalse(deferRan)
    }
    XCTAssertNil(weakCapture, "the body's captures are released when the generator is dropped")
    XCTAssertNil(weakLocal, "objects on the body's stack are released")
    XCTAssertTrue(deferRan, "defer blocks run when an unfinished generator is dropped")
    XCTAssertFalse(ranPastYield, "the rest of the body does not run")
  }

  func testDropBeforeStartRunsNothing() {
    weak var weakCapture: Tracked?
    var ran = false
    do {
      let captured = Tracked()
      weakCapture = captured
      let g = Generator<Int> { yield in
        ran = true
        withExtendedLifetime(captured) {}
        try yield(1)
      }
      _ = g
    }
    XCTAssertNil(weakCapture)
    XCTAssertFalse(ran)
  }

  func testFinishedGeneratorReleasesCapturesAtOnce() {
    weak var weakCapture: Tracked?
    let g: Generator<Int>
    do {
      let captured = Tracked()
      weakCapture = captured
      g = Generator { yield in
        withExtendedLifetime(captured) {}
        try yield(1)
      }
    }
    XCTAssertEqual(Array(g), [1])
    XCTAssertNil(weakCapture, "a finished body has released its captures")
  }

  func testManyGeneratorsDroppedMidwayDoNotLeak() {
    // Every dropped generator gives its stack back; 10,000 would exhaust mappings otherwise.
    for i in 0..<10_000 {
      let g = Generator<Int> { yield in
        var n = i
        while true {
          try yield(n)
          n += 1
        }
      }
      XCTAssertEqual(g.next(), i)
    }
  }

  func testNoCoroutineInsideBody() {
    let g = Generator<Bool> { yield in
      try yield(Coroutine.isInsideCoroutine)
    }
    XCTAssertEqual(g.next(), false)
  }

  func testAwaitInsideBodyThrowsCalledOutsideCoroutineEvenWhenConsumedFromACoroutine() {
    let done = expectation(description: "coroutine finished")
    let result = Box<[String]>([])
    DispatchQueue.global().startCoroutine {
      let g = Generator<String> { yield in
        try yield("inside body: \(Coroutine.isInsideCoroutine)")
        do {
          try Coroutine.await { (callback: @escaping @Sendable () -> Void) in callback() }
          try yield("await succeeded")
        } catch let error as CoroutineError {
          try yield("await threw \(error)")
        }
      }
      var seen = Array(g)
      seen.append("consumer inside coroutine: \(Coroutine.isInsideCoroutine)")
      // The consumer coroutine can still await after using the generator.
      try Coroutine.await { (callback: @escaping @Sendable () -> Void) in
        DispatchQueue.global().async { callback() }
      }
      seen.append("consumer awaited")
      result.value = seen
      done.fulfill()
    }
    wait(for: [done], timeout: 10)
    XCTAssertEqual(
      result.value,
      [
        "inside body: false", "await threw calledOutsideCoroutine",
        "consumer inside coroutine: true", "consumer awaited",
      ])
  }

  func testConsumedAcrossThreads() {
    let g = Generator<Int> { yield in
      for i in 0..<100 { try yield(i) }
    }
    let transfer = UnsafeTransfer(g)
    var all: [Int] = []
    let lock = NSLock()
    for _ in 0..<10 {
      let thread = DispatchQueue.global()
      let batch = thread.sync {
        (0..<10).compactMap { _ in transfer.value.next() }
      }
      lock.withLock { all += batch }
    }
    XCTAssertEqual(all, Array(0..<100))
  }

  func testNestedGenerators() {
    func range(_ r: Range<Int>) -> Generator<Int> {
      Generator { yield in for i in r { try yield(i) } }
    }
    let flat = Generator<Int> { yield in
      for r in [0..<3, 10..<12] {
        for value in range(r) { try yield(value) }
      }
    }
    XCTAssertEqual(Array(flat), [0, 1, 2, 10, 11])
  }

  func testGeneratorBodyCanBeDeepRecursion() {
    // A recursive tree walk yielding from the depth: the classic use of a stackful generator.
    final class Node {
      let value: Int
      let children: [Node]
      init(_ value: Int, _ children: [Node] = []) {
        self.value = value
        self.children = children
      }
    }
    let tree = Node(1, [Node(2, [Node(3), Node(4)]), Node(5, [Node(6)])])
    let walk = Generator<Int> { yield in
      func visit(_ node: Node) throws {
        try yield(node.value)
        for child in node.children { try visit(child) }
      }
      try visit(tree)
    }
    XCTAssertEqual(Array(walk), [1, 2, 3, 4, 5, 6])
  }

  func testCustomStackSize() {
    let g = Generator<Int>(stackSize: 64 * 1024) { yield in try yield(7) }
    XCTAssertEqual(g.next(), 7)
  }
}
