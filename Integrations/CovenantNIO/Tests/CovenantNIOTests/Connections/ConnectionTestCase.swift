import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// Base of the connection tests: a two-thread event loop group per test, servers bound to an
/// ephemeral port on 127.0.0.1, and ways to hand results out of connection coroutines.
class ConnectionTestCase: XCTestCase {
  var group: MultiThreadedEventLoopGroup!

  override func setUp() {
    super.setUp()
    group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
  }

  override func tearDown() {
    try? group.syncShutdownGracefully()
    group = nil
    super.tearDown()
  }

  /// A coroutine server on 127.0.0.1 and a free port, serving each connection with `handler`.
  func serve(
    configuration: NIOCoroutineChannel<ByteBuffer, ByteBuffer>.Configuration = .init(),
    channelInitializer: (@Sendable (any Channel) throws -> Void)? = nil,
    _ handler: @escaping @Sendable (NIOCoroutineChannel<ByteBuffer, ByteBuffer>) throws -> Void
  ) throws -> CoroutineServer {
    try ServerBootstrap(group: group)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .bindCoroutines(
        host: "127.0.0.1", port: 0, configuration: configuration,
        channelInitializer: channelInitializer, handler)
  }
}

extension CoroutineServer {
  var port: Int { localAddress.port! }
}

/// Outcome of a connection coroutine, for the test thread to wait on.
func eventually<T>(_ body: @escaping @Sendable () throws -> T) -> (
  CoPromise<T>, @Sendable () -> Void
) {
  let promise = CoPromise<T>()
  return (promise, { promise.complete(with: Result { try body() }) })
}

/// Waits (on the test thread, never a loop) until `condition` holds, polling; fails after 30 s.
func waitUntil(
  _ what: String, file: StaticString = #filePath, line: UInt = #line,
  _ condition: () -> Bool
) {
  let deadline = Date().addingTimeInterval(30)
  while !condition() {
    if Date() > deadline {
      XCTFail("timed out waiting until \(what)", file: file, line: line)
      return
    }
    usleep(1_000)
  }
}

/// A thread-safe counter and box, for values shared between loops and the test thread.
final class Shared<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value
  init(_ value: Value) { stored = value }
  var value: Value {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }
  func modify<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&stored) } }
}
