import Covenant
import CovenantTesting
import XCTest

/// `removeDuplicates`, `reductions`, `prefix`, `drop(while:)` and `chunked(byCount:)`: stages
/// with state, run inside each receive under the receiver's lock.
final class StatefulStageTests: XCTestCase {
  func testRemoveDuplicatesDropsRepeatsOfThePreviousElementOnly() {
    let result = drain(filledChannel([1, 1, 2, 2, 2, 1, 3, 3]).receiver.removeDuplicates())
    XCTAssertEqual(result.elements, [1, 2, 1, 3])
    XCTAssertTrue(result.endedClosed)
  }

  func testRemoveDuplicatesByComparesWithThePreviousElementHandedOver() {
    let words = filledChannel(["apple", "avocado", "banana", "blueberry", "cherry"])
    let byInitial = words.receiver.removeDuplicates { $0.first == $1.first }
    XCTAssertEqual(drain(byInitial).elements, ["apple", "banana", "cherry"])
  }

  func testReductionsEmitsEveryRunningResultButNotTheInitialValue() {
    let totals = filledChannel([3, 4, 5]).receiver.reductions(100, +)
    XCTAssertEqual(drain(totals).elements, [103, 107, 112])
    let empty = filledChannel([Int]()).receiver.reductions(0, +)
    XCTAssertEqual(drain(empty).elements, [])
  }

  func testReductionsCanChangeTheElementType() {
    let lines = filledChannel(["a", "b"]).receiver.reductions([String]()) { $0 + [$1] }
    XCTAssertEqual(drain(lines).elements, [["a"], ["a", "b"]])
  }

  func testPrefixEndsAfterItsCountAndCancelsItsUpstream() {
    let source = filledChannel([1, 2, 3, 4], closed: false)
    let firstTwo = source.receiver.prefix(2)
    let completed = Recorder<String>()
    firstTwo.whenComplete { completed.append("complete") }
    firstTwo.whenCanceled { completed.append("canceled") }
    let result = drain(firstTwo)
    XCTAssertEqual(result.elements, [1, 2])
    XCTAssertTrue(result.endedClosed)
    XCTAssertTrue(source.isCanceled, "nothing more is read from it: its producers learn so")
    XCTAssertFalse(firstTwo.isCanceled, "the prefix itself ended normally")
    XCTAssertTrue(firstTwo.isClosed)
    XCTAssertEqual(completed.elements, ["complete"])
    firstTwo.cancel()
    XCTAssertTrue(firstTwo.isCanceled)
  }

  func testPrefixOfZeroIsOverAtOnceAndLeavesItsUpstreamAlone() {
    let source = filledChannel([1])
    let none = source.receiver.prefix(0)
    XCTAssertTrue(none.isClosed)
    XCTAssertEqual(drain(none).elements, [])
    XCTAssertFalse(source.isCanceled)
    XCTAssertEqual(source.poll(), 1)
  }

  func testPrefixLongerThanTheStreamEndsWithIt() {
    XCTAssertEqual(drain(filledChannel([1, 2]).receiver.prefix(5)).elements, [1, 2])
  }

  func testDropWhileDropsOnlyTheLeadingElements() {
    let result = drain(filledChannel([1, 2, 5, 1, 7]).receiver.drop { $0 < 3 })
    XCTAssertEqual(result.elements, [5, 1, 7])
  }

  func testChunkedByCountHandsOverFullChunksThenThePartialOneOnClose() {
    let chunks = filledChannel(Array(1...7)).receiver.chunked(byCount: 3)
    let result = drain(chunks)
    XCTAssertEqual(result.elements, [[1, 2, 3], [4, 5, 6], [7]])
    XCTAssertTrue(result.endedClosed)
  }

  func testChunkedByCountIsCompleteOnlyOnceThePartialChunkIsHandedOver() {
    let source = filledChannel([1, 2, 3], closed: false)
    let chunks = source.receiver.chunked(byCount: 2)
    let completed = Recorder<Int>()
    chunks.whenComplete { completed.append(1) }
    XCTAssertEqual(chunks.poll(), [1, 2])
    XCTAssertNil(chunks.poll())  // 3 waits in the stage
    source.close()
    XCTAssertEqual(completed.count, 0, "the source is drained, the chunk is not handed over")
    XCTAssertEqual(chunks.poll(), [3])
    XCTAssertEqual(completed.count, 1)
  }

  func testChunkedByCountDropsThePartialChunkWhenCancelled() {
    let source = filledChannel([1, 2, 3], closed: false)
    let chunks = source.receiver.chunked(byCount: 2)
    XCTAssertEqual(chunks.poll(), [1, 2])
    XCTAssertNil(chunks.poll())
    source.cancel()
    let result = drain(chunks)
    XCTAssertEqual(result.elements, [])
    XCTAssertEqual(result.end as? CoChannelError, .canceled)
    XCTAssertTrue(chunks.isCanceled)
  }

  func testStatefulStagesWorkThroughCallbacksAndFutures() throws {
    let source = CoChannel<Int>()
    let changes = source.receiver.removeDuplicates()
    let got = Recorder<String>()
    changes.whenReceive { got.append("\($0)") }
    source.offer(1)
    let future = changes.receiveFuture()
    source.offer(1)  // a repeat: skipped
    XCTAssertNil(future.result)
    source.offer(2)
    XCTAssertEqual(try future.result?.get(), 2)
    XCTAssertEqual(got.elements, ["success(1)"])
  }
}
