import CovenantNIO
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import XCTest

/// Figures for the README, not gates: run with `COVENANT_NIO_MEASURE=1` (and, for allocations,
/// `LD_PRELOAD` of the benchmarks' malloc counter; see `measure.sh`). Without the variable
/// every test here is skipped.
final class ConnectionMeasurements: ConnectionTestCase {
  override func setUpWithError() throws {
    guard ProcessInfo.processInfo.environment["COVENANT_NIO_MEASURE"] == "1" else {
      throw XCTSkip("measurements run with COVENANT_NIO_MEASURE=1 (measure.sh)")
    }
  }

  /// Server RSS per idle connection whose coroutine waits in `readLine`, against the same
  /// number of connections accepted by a bare NIO server (no handler at all, autoRead on).
  /// The clients are plain sockets of this process: they cost kernel memory, not RSS.
  func testMemoryPerIdleConnection() throws {
    let count = Int(ProcessInfo.processInfo.environment["COVENANT_NIO_CONNECTIONS"] ?? "") ?? 9_000
    let bare = try ServerBootstrap(group: group)
      .serverChannelOption(.backlog, value: 4_096)
      .bind(host: "127.0.0.1", port: 0).wait()
    let bareBytes = try residentBytesPerConnection(count: count, port: bare.localAddress!.port!) {
      _ in true
    }
    try bare.close().wait()

    let parked = Shared(0)
    let server = try ServerBootstrap(group: group)
      .serverChannelOption(.backlog, value: 4_096)
      .bindCoroutines(host: "127.0.0.1", port: 0) { connection in
        parked.modify { $0 += 1 }
        while let line = try connection.readLine(maxLength: 1024) {
          try connection.write("\(line)\n")
        }
      }
    var stackBytes: [Int] = []
    let coroutineBytes = try residentBytesPerConnection(count: count, port: server.port) {
      _ in
      guard parked.value == count else { return false }
      stackBytes = CoroutineSnapshot.take().coroutines
        .filter { $0.startFile?.hasSuffix("ConnectionMeasurements.swift") ?? false }
        .compactMap { $0.stack?.inUse }
      return true
    }
    let averageStack = stackBytes.isEmpty ? 0 : stackBytes.reduce(0, +) / stackBytes.count
    try server.shutdown(gracePeriod: .zero)
    print(
      "idle connections: \(count); server RSS per connection: NIOCoroutineChannel "
        + "\(coroutineBytes) B, bare NIO channel (no handler) \(bareBytes) B, "
        + "difference \(coroutineBytes - bareBytes) B; stack bytes in use per suspended "
        + "connection coroutine \(averageStack) (\(stackBytes.count) coroutines)")
  }

  /// Opens `count` connections, waits until `settled`, and returns the growth of the process's
  /// resident memory divided by `count`.
  private func residentBytesPerConnection(
    count: Int, port: Int, settled: (Int) -> Bool
  ) throws -> Int {
    usleep(200_000)
    let before = residentBytes()
    var clients: [LoopbackClient] = []
    clients.reserveCapacity(count)
    for _ in 0..<count { clients.append(try LoopbackClient(port: port)) }
    waitUntil("\(count) connections settled") { settled(count) }
    usleep(500_000)
    let after = residentBytes()
    clients.removeAll()
    usleep(200_000)
    return (after - before) / count
  }

  private func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = Int(statm.split(separator: " ").dropFirst().first ?? "0") ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// Heap allocations per request and response in steady state: a client thread sends a line
  /// and waits for the reply, 20,000 times; the server reads it with `readLine` and writes a
  /// reply it already has. Counted by the `LD_PRELOAD` counter over the whole process.
  func testAllocationsPerRequest() throws {
    guard let counter = AllocationCounter() else {
      throw XCTSkip("no allocation counter: run through measure.sh (LD_PRELOAD)")
    }
    let reply = ByteBuffer(string: "+PONG\r\n")
    let server = try serve { connection in
      while let line = try connection.readLine(maxLength: 64) {
        if line == "PING" { try connection.write(reply) }
      }
    }
    defer { try? server.close() }
    let client = try LoopbackClient(port: server.port)
    let ping = Array("PING\r\n".utf8)
    var answer = [UInt8](repeating: 0, count: 7)
    // The client side allocates nothing: the count is the server's.
    func roundTrips(_ count: Int) {
      for _ in 0..<count {
        client.send(ping)
        var received = 0
        while received < 7 {
          let n = answer.withUnsafeMutableBytes {
            recv(client.descriptor, $0.baseAddress! + received, 7 - received, 0)
          }
          if n <= 0 { return }
          received += n
        }
      }
    }
    roundTrips(2_000)  // warm up: buffers, caches, stacks
    let requests = 20_000
    let before = counter.count
    roundTrips(requests)
    let allocations = counter.count - before
    print(
      "allocations per request (readLine + write of a ready reply, server side): "
        + String(format: "%.3f", Double(allocations) / Double(requests)))
  }

  /// `readLine` from memory: 80-byte lines fed through an `EmbeddedChannel` in 64 KiB buffers,
  /// read by a coroutine on its loop.
  func testReadLineThroughputFromMemory() throws {
    let loop = EmbeddedEventLoop()
    let channel = EmbeddedChannel(loop: loop)
    let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
      wrappingChannelSynchronously: channel)
    let line = String(repeating: "x", count: 78) + "\r\n"
    let linesPerBuffer = 65_536 / 80
    var block = ByteBuffer()
    for _ in 0..<linesPerBuffer { block.writeString(line) }
    let buffers = 2_000
    let count = Shared(0)
    loop.startCoroutine {
      var bytes = 0
      defer { count.value = bytes }
      while let line = try connection.readLine(maxLength: 1024) { bytes += line.utf8.count }
    }
    loop.run()
    // CPU time, not wall time: on a machine shared with other work, this process's share of a
    // core varies; the CPU it used does not.
    let start = processCPUNanoseconds()
    for _ in 0..<buffers { try channel.writeInbound(block) }
    let seconds = Double(processCPUNanoseconds() - start) / 1e9
    _ = try channel.finish()  // the end of input: the reader returns
    loop.run()
    let bytes = buffers * linesPerBuffer * 80
    XCTAssertEqual(count.value, buffers * linesPerBuffer * 78)
    print(
      "readLine from memory, 80-byte lines: "
        + String(
          format: "%.0f MB/s of CPU time, %.1f ns per line", Double(bytes) / seconds / 1e6,
          seconds * 1e9 / Double(buffers * linesPerBuffer)))
  }
}

/// The CPU time this process has used, in nanoseconds.
private func processCPUNanoseconds() -> Int {
  var now = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
  return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// The benchmarks' malloc counter (`Benchmarks/Sources/AllocationCounter`), when `measure.sh`
/// preloads it; counting is switched on here.
struct AllocationCounter {
  private let read: @convention(c) () -> Int64

  init?() {
    let process = UnsafeMutableRawPointer(bitPattern: 0)
    guard let count = dlsym(process, "cov_allocation_count"),
      let switchOn = dlsym(process, "cov_allocation_counting")
    else { return nil }
    read = unsafeBitCast(count, to: (@convention(c) () -> Int64).self)
    unsafeBitCast(switchOn, to: (@convention(c) (Int32) -> Void).self)(1)
  }

  var count: Int { Int(read()) }
}
