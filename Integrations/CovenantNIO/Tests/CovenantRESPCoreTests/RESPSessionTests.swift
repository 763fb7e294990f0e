import CovenantRESPCore
import NIOCore
import Synchronization
import XCTest

/// Collects what a subscribed session pushes, in order.
private final class Collector: RESPSubscriber {
  let frames = Mutex<[String]>([])
  func push(_ frame: ByteBuffer) { frames.withLock { $0.append(String(buffer: frame)) } }
}

final class RESPSessionTests: XCTestCase {
  private let store = RESPStore(shardCount: 4)
  private let pubsub = RESPPubSub()

  private func run(_ session: inout RESPSession, _ words: String...) -> (String, Bool) {
    var out = ByteBuffer()
    let keepOpen = session.execute(words.map { ByteBuffer(string: $0) }, into: &out)
    return (String(buffer: out), keepOpen)
  }

  func testStringCommands() {
    var session = RESPSession(store: store, pubsub: pubsub) { Collector() }
    XCTAssertEqual(run(&session, "ping").0, "+PONG\r\n")
    XCTAssertEqual(run(&session, "SET", "k", "v").0, "+OK\r\n")
    XCTAssertEqual(run(&session, "get", "k").0, "$1\r\nv\r\n")
    XCTAssertEqual(run(&session, "GET", "missing").0, "$-1\r\n")
    XCTAssertEqual(run(&session, "INCR", "n").0, ":1\r\n")
    XCTAssertEqual(run(&session, "INCR", "n").0, ":2\r\n")
    XCTAssertEqual(run(&session, "INCR", "k").0, "-ERR value is not an integer or out of range\r\n")
    XCTAssertEqual(run(&session, "MGET", "k", "x", "n").0, "*3\r\n$1\r\nv\r\n$-1\r\n$1\r\n2\r\n")
    XCTAssertEqual(run(&session, "EXISTS", "k", "k", "x").0, ":2\r\n")
    XCTAssertEqual(run(&session, "DEL", "k", "x").0, ":1\r\n")
    XCTAssertEqual(
      run(&session, "SET", "k", "v", "EX", "0").0,
      "-ERR invalid expire time in 'set' command\r\n")
    XCTAssertEqual(run(&session, "SET", "k", "v", "NX").0, "-ERR syntax error\r\n")
    XCTAssertEqual(run(&session, "GET").0, "-ERR wrong number of arguments for 'get' command\r\n")
    XCTAssertEqual(run(&session, "QUIT").1, false)
  }

  func testAnExpiredKeyIsGone() {
    store.set(ByteBuffer(string: "soon"), to: ByteBuffer(string: "v"), expiresAt: 1)
    XCTAssertNil(store.get(ByteBuffer(string: "soon")))
    XCTAssertFalse(store.delete(ByteBuffer(string: "soon")))
  }

  func testAConfirmationPrecedesTheMessagesOfItsChannel() {
    let collector = Collector()
    var subscriber = RESPSession(store: store, pubsub: pubsub) { collector }
    var publisher = RESPSession(store: store, pubsub: pubsub) { Collector() }
    // A reply written before SUBSCRIBE and not yet sent: it must come first.
    var pending = ByteBuffer(string: "+earlier reply\r\n")
    XCTAssertTrue(
      subscriber.execute(["SUBSCRIBE", "news"].map { ByteBuffer(string: $0) }, into: &pending))
    XCTAssertEqual(pending.readableBytes, 0)
    XCTAssertEqual(run(&publisher, "PUBLISH", "news", "hello").0, ":1\r\n")
    XCTAssertEqual(run(&subscriber, "GET", "k").0, "")  // pushed, not written to `out`
    XCTAssertEqual(run(&subscriber, "UNSUBSCRIBE").0, "")
    XCTAssertEqual(run(&publisher, "PUBLISH", "news", "late").0, ":0\r\n")
    XCTAssertEqual(
      collector.frames.withLock { $0 },
      [
        "+earlier reply\r\n",
        "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n",
        "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n",
        "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET"
          + " are allowed in this context\r\n",
        "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnews\r\n:0\r\n",
      ])
    subscriber.end()
  }
}
