import CovenantNIO
import NIOCore
import NIOPosix
import XCTest

/// Many connections at once, each served by its own coroutine and driven by a client coroutine.
final class ConcurrentConnectionsTests: ConnectionTestCase {
  /// 1,000 client coroutines connect at once, all stay open until every one has had its first
  /// answer, then each makes a second request and closes.
  func testThousandConcurrentConnections() throws {
    let count = 1_000
    let open = Shared(0)
    let server = try ServerBootstrap(group: group)
      .serverChannelOption(.backlog, value: 1_024)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .bindCoroutines(host: "127.0.0.1", port: 0) { connection in
        open.modify { $0 += 1 }
        defer { open.modify { $0 -= 1 } }
        while let line = try connection.readLine(maxLength: 64) {
          try connection.write("\(line) \(line.count)\n")
        }
      }
    let port = server.port
    let allAnswered = CoPromise<Void>()
    let proceed = CoPromise<Void>()
    let answered = Shared(0)
    let clients = (0..<count).map { index in
      let loop = group.next()
      return loop.coroutineFuture { () -> Bool in
        // A generous connect timeout: 1,000 connects at once under ThreadSanitizer on a loaded
        // machine take longer than NIO's default 10 s.
        let connection = try ClientBootstrap(group: loop).connectTimeout(.seconds(120))
          .connectCoroutine(host: "127.0.0.1", port: port)
        try connection.write("client\(index)\n")
        guard try connection.readLine() == "client\(index) \("client\(index)".count)" else {
          return false
        }
        if answered.modify({
          $0 += 1
          return $0
        }) == count {
          allAnswered.success(())
        }
        try proceed.await()  // every connection is open until the test has counted them
        try connection.write("bye\n")
        let last = try connection.readLine()
        try connection.close()
        return last == "bye 3"
      }
    }
    _ = value(of: allAnswered)
    XCTAssertEqual(open.value, count, "every connection open at once")
    proceed.success(())
    XCTAssertEqual(clients.filter { value(of: $0) == true }.count, count)
    try server.shutdown(gracePeriod: .seconds(5))
    XCTAssertEqual(open.value, 0)
  }
}
