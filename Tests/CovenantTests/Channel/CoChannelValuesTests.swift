import Covenant
import Dispatch
import XCTest

/// `CoChannel.values`: ends on close, throws on cancellation, where the plain iterator ends
/// in every case.
final class CoChannelValuesTests: XCTestCase {
  func testEndsWithNilOnceClosedAndDrained() {
    let channel = CoChannel<Int>()
    for value in 1...3 { channel.offer(value) }
    channel.close()
    coRun {
      var received: [Int] = []
      while let value = try channel.values.next() { received.append(value) }
      XCTAssertEqual(received, [1, 2, 3])
      XCTAssertNil(try channel.values.next(), "still nil after the end")
    }
  }

  func testThrowsWhenTheChannelIsCancelled() {
    let channel = CoChannel<Int>(bufferType: .none)
    let queue = CoQueue()
    let outcome = Box("")
    queue.start {
      var received = 0
      do {
        while try channel.values.next() != nil { received += 1 }
        outcome.value = "ended after \(received)"
      } catch {
        outcome.value = "\(error) after \(received)"
      }
    }
    queue.flush()
    XCTAssertTrue(channel.offer(1))
    queue.flush()
    channel.cancel()
    queue.flush()
    XCTAssertEqual(outcome.value, "\(CoChannelError.canceled) after 1")
  }

  func testThrowsWhenTheCoroutineIsCancelledWhereThePlainIteratorEnds() {
    let channel = CoChannel<Int>(bufferType: .none)
    let scope = CoScope()
    let queue = CoQueue()
    let throwing = Box("")
    let plain = Box("")
    queue.queue.startCoroutine(in: scope) {
      do {
        while try channel.values.next() != nil {}
        throwing.value = "ended"
      } catch { throwing.value = "\(error)" }
    }
    queue.queue.startCoroutine(in: scope) {
      for _ in channel.makeIterator() {}
      plain.value = "ended"
    }
    queue.flush()
    scope.cancel()
    queue.flush()
    XCTAssertEqual(throwing.value, "\(CoroutineError.canceled)")
    XCTAssertEqual(plain.value, "ended", "the plain iterator cannot tell")
    XCTAssertFalse(channel.offer(1), "neither left a receiver behind")
  }

  func testOutsideACoroutineReadyElementsThenThrows() throws {
    let channel = CoChannel<Int>()
    channel.offer(4)
    XCTAssertEqual(try channel.values.next(), 4)
    XCTAssertThrowsError(try channel.values.next()) {
      XCTAssertEqual($0 as? CoroutineError, .calledOutsideCoroutine)
    }
  }

  func testMappedReceiverValues() {
    let words = CoChannel<String>()
    words.offer("one")
    words.offer("three")
    words.close()
    coRun {
      let lengths = words.map { $0.count }
      var received: [Int] = []
      while let value = try lengths.values.next() { received.append(value) }
      XCTAssertEqual(received, [3, 5])
    }
  }
}
