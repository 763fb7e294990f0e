import CovenantNIO
import Dispatch
import NIOCore
import NIOPosix
import XCTest

/// Coroutine snapshots and dumps see the coroutines of event loops.
final class SnapshotTests: XCTestCase {
  func testCoroutinesOnALoopAreListedWithTheirLoop() throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { try? group.syncShutdownGracefully() }
    let loop = group.next()
    let nioPromise = loop.makePromise(of: Int.self)
    let gate = Promise<Int>()
    let first = loop.coroutineFuture(name: "nio: covenant promise") { try gate.await() }
    let second = loop.coroutineFuture(name: "nio: nio future") {
      try nioPromise.futureResult.await()
    }
    var snapshot = CoroutineSnapshot.take()
    let deadline = DispatchTime.now() + hangGuard
    while snapshot.coroutines.filter({
      $0.name?.hasPrefix("nio:") == true && $0.state == .suspended
    })
    .count < 2, DispatchTime.now() < deadline {
      usleep(1000)
      snapshot = CoroutineSnapshot.take()
    }
    let covenant = snapshot.coroutines.first { $0.name == "nio: covenant promise" }
    let nio = snapshot.coroutines.first { $0.name == "nio: nio future" }
    XCTAssertEqual(covenant?.state, .suspended)
    XCTAssertEqual(covenant?.wait, .future(type: "Promise<Int>"))
    XCTAssertTrue(
      covenant?.scheduler?.hasPrefix("event loop ") ?? false, "\(String(describing: covenant))")
    XCTAssertEqual(nio?.state, .suspended)
    if case .callback = nio?.wait {} else { XCTFail("\(String(describing: nio?.wait))") }
    XCTAssertTrue(snapshot.dump().contains("\"nio: nio future\""))
    XCTAssertEqual(covenant?.startFile, "CovenantNIOTests/SnapshotTests.swift")
    gate.fulfill(1)
    nioPromise.succeed(2)
    XCTAssertEqual(value(of: first), 1)
    XCTAssertEqual(value(of: second), 2)
  }
}
