import CovenantNIO
import NIOCore
import NIOEmbedded

#if canImport(Glibc)
  import Glibc
#else
  import Darwin
#endif

// CovenantNIOReadLineBenchmark (N5): NIOCoroutineChannel.readLine throughput from memory, on
// 80-byte lines. An EmbeddedChannel is fed 64 KiB buffers (NIO's usual read size) cut from a
// stream of lines, so that a line spans two buffers now and then, as from a socket; a coroutine
// on the channel's loop reads them with `readLine(maxLength:)`. No socket, no syscalls: the
// figure is the cost of the read path itself (handler, buffering, wake-up, line search, String).
//
//   swift run -c release --package-path Integrations/CovenantNIO CovenantNIOReadLineBenchmark
//
// Prints MB/s (10^6 bytes) for readLine and, for comparison, read(until:) (no String made), per
// second of CPU time (this thread's: on a shared machine wall time measures the neighbours too)
// and per second of wall time.

let lineLength = 80  // bytes, "\n" included
let chunkSize = 65_536
let megabytesPerRun = 100
let runs = 5

// 5 chunks of 64 KiB hold 4,096 whole lines (65,536 ≡ 16 mod 80): the stream repeats after them.
let stream: [UInt8] = (0..<(5 * chunkSize / lineLength)).flatMap { index -> [UInt8] in
  let text = "line \(index) " + String(repeating: "x", count: lineLength)
  return Array(text.utf8.prefix(lineLength - 1)) + [UInt8(ascii: "\n")]
}
let chunks = (0..<5).map { ByteBuffer(bytes: stream[($0 * chunkSize)..<(($0 + 1) * chunkSize)]) }

/// What the reading coroutine counted. Only touched on the embedded loop's thread (this one).
final class Tally: @unchecked Sendable {
  var lines = 0
  var bytes = 0
}

enum Reader { case readLine, readUntil }

/// This thread's CPU time, in seconds.
func cpuSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// MB/s per CPU second and per wall second.
func megabytesPerSecond(_ reader: Reader) throws -> (cpu: Double, wall: Double) {
  let loop = EmbeddedEventLoop()
  let channel = EmbeddedChannel(loop: loop)
  let connection = try NIOCoroutineChannel<ByteBuffer, ByteBuffer>(
    wrappingChannelSynchronously: channel)
  try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
  let tally = Tally()
  loop.startCoroutine {
    switch reader {
    case .readLine:
      while let line = try connection.readLine(maxLength: 1024) {
        tally.lines += 1
        tally.bytes += line.utf8.count + 1
      }
    case .readUntil:
      while let line = try connection.read(until: UInt8(ascii: "\n"), maxLength: 1024) {
        tally.lines += 1
        tally.bytes += line.readableBytes + 1
      }
    }
  }
  loop.run()
  let rounds = megabytesPerRun * 1_000_000 / chunkSize
  let clock = ContinuousClock()
  let cpuStart = cpuSeconds()
  let elapsed = try clock.measure {
    for round in 0..<rounds {
      try channel.writeInbound(chunks[round % chunks.count])
      loop.run()
    }
  }
  let cpu = cpuSeconds() - cpuStart
  let expected = rounds * chunkSize
  // Whole lines only: the last partial line is still buffered.
  precondition(tally.bytes > expected - lineLength && tally.bytes <= expected, "lines lost")
  precondition(tally.lines == tally.bytes / lineLength, "a line of the wrong length")
  _ = try? channel.finish()
  let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  return (Double(tally.bytes) / cpu / 1e6, Double(tally.bytes) / seconds / 1e6)
}

for reader in [Reader.readLine, .readUntil] {
  let figures = try (0..<runs).map { _ in try megabytesPerSecond(reader) }
  let cpu = figures.map(\.cpu).sorted()
  let wall = figures.map(\.wall).sorted()
  let name = reader == .readLine ? "readLine(maxLength:)" : "read(until:maxLength:)"
  print(
    "N5 \(name), 80-byte lines from memory: \(Int(cpu[runs / 2])) MB per CPU second"
      + " (min \(Int(cpu[0])), max \(Int(cpu[runs - 1]))), \(Int(wall[runs / 2])) MB/s wall;"
      + " medians of \(runs) runs of \(megabytesPerRun) MB")
}
