import CCoroutineContext
import CCovenantShims
import Covenant
import XCTest

/// What a channel's buffer costs in memory: it is allocated as it fills, doubling up to the
/// capacity, so an empty channel of any capacity costs what an unbounded one costs, a full one
/// holds `capacity` slots (not the next power of two), and filling and draining it again
/// allocates nothing more.
///
/// Measured with the heap's own count of bytes in use (`cov_heap_in_use`, glibc's
/// `mallinfo2`) over many channels at once, so that a few bytes of noise (chunks that glibc's
/// per-thread caches count as in use) vanish in the average. Skipped where there is no such
/// count (other C libraries, and the sanitizers, whose allocators glibc does not see).
final class CoChannelMemoryTests: XCTestCase {
  /// As big as a SwiftNIO `ByteBuffer`: a reference and two words.
  private struct Chunk {
    let storage: AnyObject?
    let indices: UInt64
    let slice: UInt64
  }

  private static let slot = MemoryLayout<Chunk?>.stride

  func testAnEmptyChannelOfAnyCapacityCostsWhatAnUnboundedOneCosts() throws {
    let unbounded = try Self.bytesPerObject(1_000) { CoChannel<Chunk>() }
    XCTAssertGreaterThan(unbounded, 32, "the measurement sees the channel object")
    // Fewer of the largest, with a tolerance for the noise of fewer: before the buffer grew as
    // it filled, one of capacity 1,024 held 24 KiB, and one of 2^20 24 MiB.
    for (capacity, count, tolerance) in [(1, 1_000, 8), (16, 1_000, 8), (1_024, 1_000, 8)]
      + [(1 << 20, 10, 256)]
    {
      let bounded = try Self.bytesPerObject(count) { CoChannel<Chunk>(capacity: capacity) }
      XCTAssertLessThanOrEqual(bounded, unbounded + tolerance, "capacity \(capacity)")
    }
    for type in [CoChannel<Chunk>.BufferType.none, .conflated] {
      let other = try Self.bytesPerObject(1_000) { CoChannel<Chunk>(bufferType: type) }
      XCTAssertLessThanOrEqual(other, unbounded + 8, "\(type)")
    }
  }

  func testAFullChannelHoldsItsCapacityAndNoMore() throws {
    let capacity = 1_000  // growth goes 4, 8, …, 512, then 1,000 (not 1,024)
    let empty = try Self.bytesPerObject(50) { CoChannel<Chunk>(capacity: capacity) }
    let full = try Self.bytesPerObject(50) { () -> CoChannel<Chunk> in
      let channel = CoChannel<Chunk>(capacity: capacity)
      for index in 0..<capacity {
        XCTAssertTrue(channel.offer(Chunk(storage: nil, indices: UInt64(index), slice: 0)))
      }
      XCTAssertFalse(channel.offer(Chunk(storage: nil, indices: 0, slice: 0)), "full")
      return channel
    }
    let buffer = full - empty
    XCTAssertGreaterThanOrEqual(buffer, capacity * Self.slot)
    // The array's header and the heap block's rounding, far less than 24 more slots.
    XCTAssertLessThan(buffer, capacity * Self.slot + 128)
  }

  /// A drained buffer keeps its size: filling it again takes no memory (the allocation gate's
  /// C3 counts the allocations of a channel's steady state; this is the same for a larger one).
  /// Measured around the refill alone, a few milliseconds, so that what other threads allocate
  /// meanwhile stays far below what 500 buffers grown again would take.
  func testARefilledBufferTakesNoMoreMemory() throws {
    let channels = (0..<500).map { _ in CoChannel<Chunk>(capacity: 64) }
    func fill() {
      for channel in channels {
        for index in 0..<64 {
          XCTAssertTrue(channel.offer(Chunk(storage: nil, indices: UInt64(index), slice: 0)))
        }
      }
    }
    func drain() {
      for channel in channels {
        for index in 0..<64 { XCTAssertEqual(channel.poll()?.indices, UInt64(index)) }
        XCTAssertNil(channel.poll())
      }
    }
    fill()
    drain()
    let before = try Self.heapBytesInUse()
    fill()
    let after = try Self.heapBytesInUse()
    drain()
    let regrown = channels.count * 64 * Self.slot
    XCTAssertLessThan(after - before, regrown / 8, "grown again: \(regrown) bytes")
  }

  func testElementsKeepTheirOrderWhileTheBufferGrowsAroundItsEnd() {
    let channel = CoChannel<Int>(capacity: 100)
    var next = 0
    var expected = 0
    // Receiving some before each growth moves the ring's head, so that the elements wrap
    // around the end of the storage when it grows.
    for batch in 1...12 {
      for _ in 0..<batch * 8 where channel.count < 100 {
        XCTAssertTrue(channel.offer(next))
        next += 1
      }
      for _ in 0..<batch {
        XCTAssertEqual(channel.poll(), expected)
        expected += 1
      }
    }
    while channel.offer(next) { next += 1 }
    XCTAssertEqual(channel.count, 100)
    while let value = channel.poll() {
      XCTAssertEqual(value, expected)
      expected += 1
    }
    XCTAssertEqual(expected, next)
  }

  func testACancelledChannelFreesItsBuffer() throws {
    // Many, for the chunks of the smaller buffers it went through, which glibc's per-thread
    // caches keep and count as in use (a few kilobytes in all).
    let empty = try Self.bytesPerObject(500) { CoChannel<Chunk>(capacity: 512) }
    let cancelled = try Self.bytesPerObject(500) { () -> CoChannel<Chunk> in
      let channel = CoChannel<Chunk>(capacity: 512)
      for _ in 0..<512 { channel.offer(Chunk(storage: nil, indices: 0, slice: 0)) }
      channel.cancel()
      return channel
    }
    // A kept buffer would be 512 slots (over 12 KB per channel); the margin is malloc's noise
    // (per-thread caches of the chunks it went through: 35 bytes per channel seen in CI).
    XCTAssertLessThanOrEqual(cancelled, empty + 256)
  }

  // MARK: - Measuring

  /// The heap bytes each of `count` objects made by `make` holds, kept alive together.
  private static func bytesPerObject<T>(_ count: Int, _ make: () -> T) throws -> Int {
    var objects: [T] = []
    objects.reserveCapacity(count)
    let before = try heapBytesInUse()
    for _ in 0..<count { objects.append(make()) }
    let after = try heapBytesInUse()
    withExtendedLifetime(objects) {}
    return (after - before) / count
  }

  private static func heapBytesInUse() throws -> Int {
    if TestScale.runsUnderSanitizer { throw XCTSkip("the sanitizers' allocators are not counted") }
    let bytes = cov_heap_in_use()
    if bytes == 0 { throw XCTSkip("no count of heap bytes in use on this platform") }
    return Int(bytes)
  }
}
