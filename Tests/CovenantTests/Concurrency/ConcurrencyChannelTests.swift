import Covenant
import CovenantTesting
import Foundation
import XCTest

final class ConcurrencyChannelTests: XCTestCase {
  func testReceiverIsAnAsyncSequenceEndingOnClose() async {
    let (receiver, sender) = CoChannel<Int>().pair
    for value in 1...3 { sender.offer(value) }
    sender.close()
    var received: [Int] = []
    for await value in receiver { received.append(value) }
    XCTAssertEqual(received, [1, 2, 3])
  }

  func testAsyncLoopWaitsForElementsSentByACoroutine() async {
    let channel = CoChannel<Int>(bufferType: .none)
    DispatchQueue.global().startCoroutine {
      for value in 0..<100 { try channel.awaitSend(value) }
      channel.close()
    }
    var received: [Int] = []
    for await value in channel.receiver { received.append(value) }
    XCTAssertEqual(received, Array(0..<100))
  }

  func testAsyncLoopEndsOnCancel() async {
    let channel = CoChannel<Int>()
    channel.offer(1)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { channel.cancel() }
    var received: [Int] = []
    for await value in channel.receiver { received.append(value) }
    XCTAssertEqual(received, [1])
  }

  func testAsyncSequenceAlgorithms() async {
    let channel = CoChannel<Int>()
    for value in 1...10 { channel.offer(value) }
    channel.close()
    let evens = channel.receiver.filter { $0 % 2 == 0 }
    var received: [Int] = []
    for await value in evens.prefix(3) { received.append(value) }
    XCTAssertEqual(received, [2, 4, 6])
  }

  func testTaskCancellationEndsTheLoopWithoutLosingElements() async throws {
    let channel = CoChannel<Int>()
    let task = Task { () -> [Int] in
      var received: [Int] = []
      for await value in channel.receiver { received.append(value) }
      return received
    }
    try await Task.sleep(nanoseconds: 20_000_000)
    task.cancel()
    let received = await task.value
    XCTAssertEqual(received, [])
    XCTAssertFalse(channel.isCanceled, "the channel itself stays open")
    channel.offer(7)
    XCTAssertEqual(channel.poll(), 7, "the cancelled loop took nothing")
  }

  func testSeveralAsyncConsumersShareTheElements() async {
    let channel = CoChannel<Int>(capacity: 4)
    DispatchQueue.global().startCoroutine {
      for value in 0..<1_000 { try channel.awaitSend(value) }
      channel.close()
    }
    let all = await withTaskGroup(of: [Int].self) { group in
      for _ in 0..<4 {
        group.addTask {
          var mine: [Int] = []
          for await value in channel.receiver { mine.append(value) }
          return mine
        }
      }
      var all: [Int] = []
      for await part in group { all += part }
      return all
    }
    XCTAssertEqual(all.sorted(), Array(0..<1_000))
  }

  func testForTryAwaitAlsoCompiles() async throws {
    let channel = CoChannel<Int>()
    channel.offer(1)
    channel.close()
    var count = 0
    for try await _ in channel.receiver { count += 1 }
    XCTAssertEqual(count, 1)
  }
}

final class ConcurrencyChannelSequenceTests: XCTestCase {
  func testChannelItselfIsAnAsyncSequence() async {
    let channel = CoChannel<String>(bufferType: .conflated)
    channel.offer("old")
    channel.offer("new")
    channel.close()
    var received: [String] = []
    for await value in channel { received.append(value) }
    XCTAssertEqual(received, ["new"])
  }

  func testMappedReceiverIsAnAsyncSequence() async {
    let channel = CoChannel<Int>()
    for value in 1...3 { channel.offer(value) }
    channel.close()
    var received: [String] = []
    for await value in channel.map({ "#\($0)" }) { received.append(value) }
    XCTAssertEqual(received, ["#1", "#2", "#3"])
  }
}
