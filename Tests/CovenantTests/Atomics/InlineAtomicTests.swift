import CCovenantShims
import CovenantCore
import Dispatch
import XCTest

/// `InlineAtomic`: every operation on every width, the stable in-object address the C atomics
/// rely on, and the memory orderings as ThreadSanitizer sees them.
final class InlineAtomicTests: XCTestCase {
  func testEveryWidthIsLockFree() {
    XCTAssertEqual(cov_atomics_are_lock_free(), 1)
  }

  func testIntegerOperationsOnEveryWidth() {
    checkIntegerOperations(UInt8.self)
    checkIntegerOperations(UInt32.self)
    checkIntegerOperations(UInt64.self)
    checkIntegerOperations(UInt.self)
    checkIntegerOperations(Int.self)
  }

  private func checkIntegerOperations<T: FixedWidthInteger & InlineAtomicValue>(_: T.Type) {
    let name = "\(T.self)"
    let atomic = InlineAtomic<T>(5)
    XCTAssertEqual(atomic.load(ordering: .relaxed), 5, name)
    atomic.store(T.max, ordering: .releasing)
    XCTAssertEqual(atomic.load(ordering: .acquiring), T.max, name)
    XCTAssertEqual(atomic.exchange(3, ordering: .acquiringAndReleasing), T.max, name)

    let failed = atomic.compareExchange(expected: 4, desired: 9, ordering: .sequentiallyConsistent)
    XCTAssertFalse(failed.exchanged, name)
    XCTAssertEqual(failed.original, 3, name)
    let succeeded = atomic.compareExchange(
      expected: 3, desired: T.min, successOrdering: .releasing, failureOrdering: .relaxed)
    XCTAssertTrue(succeeded.exchanged, name)
    XCTAssertEqual(succeeded.original, 3, name)
    XCTAssertEqual(atomic.load(ordering: .sequentiallyConsistent), T.min, name)

    atomic.store(T.max, ordering: .relaxed)
    let added = atomic.wrappingAdd(2, ordering: .relaxed)  // wraps past the maximum
    XCTAssertEqual(added.oldValue, T.max, name)
    XCTAssertEqual(added.newValue, T.min &+ 1, name)
    XCTAssertEqual(atomic.load(ordering: .relaxed), T.min &+ 1, name)

    atomic.store(0b0101, ordering: .relaxed)
    let ored = atomic.bitwiseOr(0b0011, ordering: .acquiring)
    XCTAssertEqual(ored.oldValue, 0b0101, name)
    XCTAssertEqual(ored.newValue, 0b0111, name)
    XCTAssertEqual(atomic.load(ordering: .relaxed), 0b0111, name)

    atomic.store(T.max, ordering: .relaxed)
    let anded = atomic.bitwiseAnd(0b0110, ordering: .releasing)
    XCTAssertEqual(anded.oldValue, T.max, name)
    XCTAssertEqual(anded.newValue, 0b0110, name)
    XCTAssertEqual(atomic.load(ordering: .relaxed), 0b0110, name)
  }

  /// `InlineByteAtomic` takes one byte, so a flag fills an object's padding as `Atomic<Bool>`
  /// did, and runs the same operations on it.
  func testByteAtomicTakesOneByte() {
    XCTAssertEqual(MemoryLayout<InlineByteAtomic<Bool>>.size, 1)
    XCTAssertEqual(MemoryLayout<InlineByteAtomic<Bool>>.alignment, 1)
    XCTAssertEqual(MemoryLayout<InlineByteAtomic<UInt8>>.size, 1)
    XCTAssertEqual(MemoryLayout<InlineAtomic<UInt8>>.size, 8, "word-sized storage, for contrast")

    let holder = ByteHolder()
    let storedProperties = UInt(bitPattern: _getUnsafePointerToStoredProperties(holder))
    XCTAssertEqual(holder.word.withAddress { UInt(bitPattern: $0) }, storedProperties)
    XCTAssertEqual(holder.flag.withAddress { UInt(bitPattern: $0) }, storedProperties + 8)
    XCTAssertEqual(holder.byte.withAddress { UInt(bitPattern: $0) }, storedProperties + 9)

    XCTAssertFalse(holder.flag.exchange(true, ordering: .acquiringAndReleasing))
    XCTAssertEqual(holder.byte.wrappingAdd(255, ordering: .relaxed).newValue, 254)  // wraps
    XCTAssertEqual(holder.byte.bitwiseAnd(0x0F, ordering: .relaxed).newValue, 0x0E)
    XCTAssertEqual(holder.word.load(ordering: .relaxed), 7, "neighbours untouched")
    XCTAssertTrue(holder.flag.load(ordering: .relaxed))
  }

  /// `GlobalAtomic`s are words of static storage in the C module, one per index, 8-aligned.
  func testGlobalAtomicsAreDistinctStaticWords() {
    let table = GlobalAtomic<UInt>(COV_GLOBAL_ATOMIC_RETURNED_ERROR_TABLE)
    let mode = GlobalAtomic<Bool>(COV_GLOBAL_ATOMIC_DEFAULT_STACK_MODE)
    let first = table.withAddress { UInt(bitPattern: $0) }
    let second = mode.withAddress { UInt(bitPattern: $0) }
    XCTAssertEqual(first % 8, 0)
    XCTAssertEqual(second, first + 8)
    XCTAssertEqual(table.withAddress { UInt(bitPattern: $0) }, first, "the same on every call")

    // `Coroutine.defaultStackMode` lives in the second word.
    XCTAssertFalse(mode.load(ordering: .relaxed))
    Coroutine.defaultStackMode = .dedicated
    XCTAssertTrue(mode.load(ordering: .relaxed))
    Coroutine.defaultStackMode = .shared
    XCTAssertFalse(mode.load(ordering: .relaxed))
  }

  func testBool() {
    let flag = InlineAtomic<Bool>(false)
    XCTAssertFalse(flag.exchange(true, ordering: .acquiringAndReleasing))
    XCTAssertTrue(flag.exchange(true, ordering: .acquiringAndReleasing))
    XCTAssertEqual(
      flag.compareExchange(expected: false, desired: false, ordering: .relaxed).exchanged, false)
    XCTAssertEqual(
      flag.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged, true)
    XCTAssertFalse(flag.load(ordering: .relaxed))
  }

  func testOptionalPointer() {
    let slot = InlineAtomic<UnsafeMutableRawPointer?>(nil)
    let memory = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
    defer { memory.deallocate() }
    XCTAssertNil(slot.exchange(memory, ordering: .acquiringAndReleasing))
    XCTAssertEqual(slot.load(ordering: .acquiring), memory)
    let swapped = slot.compareExchange(expected: memory, desired: nil, ordering: .relaxed)
    XCTAssertTrue(swapped.exchanged)
    XCTAssertEqual(swapped.original, memory)
    XCTAssertNil(slot.load(ordering: .relaxed))
  }

  /// The assumption the whole layer rests on: borrowing an `InlineAtomic` stored in an object
  /// yields the storage inside that object, the same address on every call and every thread.
  func testStorageAddressIsInsideTheObjectAndStable() {
    let holder = AtomicHolder()
    let addresses = holder.addresses()
    XCTAssertEqual(holder.addresses(), addresses, "same addresses on a second call")
    let fromOtherThread = DispatchQueue(label: "other").sync { holder.addresses() }
    XCTAssertEqual(fromOtherThread, addresses, "same addresses on another thread")
    XCTAssertEqual(Set(addresses).count, addresses.count, "one storage per property")

    // The four 8-byte storages are the object's stored properties, in declaration order.
    let storedProperties = UInt(bitPattern: _getUnsafePointerToStoredProperties(holder))
    XCTAssertEqual(addresses, (0..<4).map { storedProperties + UInt(8 * $0) })
    XCTAssertEqual(holder.wide.load(ordering: .relaxed), 2)  // written in place by `init`
  }

  func testGlobalAndHeapStorageKeepTheirAddress() {
    let first = globalCounter.withAddress { UInt(bitPattern: $0) }
    globalCounter.wrappingAdd(1, ordering: .relaxed)
    XCTAssertEqual(globalCounter.withAddress { UInt(bitPattern: $0) }, first)

    let slots = UnsafeMutablePointer<InlineAtomic<UInt>>.allocate(capacity: 4)
    defer { slots.deallocate() }
    for index in 0..<4 { (slots + index).initialize(to: InlineAtomic(UInt(index))) }
    for index in 0..<4 {
      XCTAssertEqual(slots[index].withAddress { $0 }, UnsafeMutableRawPointer(slots + index))
      XCTAssertEqual(slots[index].load(ordering: .relaxed), UInt(index))
    }
    for index in 0..<4 { _ = (slots + index).move() }
  }

  func testConcurrentIncrementsAreNotLost() {
    let counter = AtomicHolder()
    let threads = 8
    let increments = TestScale.stress(20_000)
    DispatchQueue.concurrentPerform(iterations: threads) { _ in
      for _ in 0..<increments {
        counter.wide.wrappingAdd(1, ordering: .relaxed)
        // A compare-exchange loop on the 1-byte storage: byte-sized atomics must not disturb
        // their neighbours.
        var current = counter.narrow.load(ordering: .relaxed)
        while true {
          let (exchanged, original) = counter.narrow.compareExchange(
            expected: current, desired: current &+ 1, ordering: .relaxed)
          if exchanged { break }
          current = original
        }
      }
    }
    let total = threads * increments
    XCTAssertEqual(counter.wide.load(ordering: .relaxed), UInt64(2 + total))
    XCTAssertEqual(counter.narrow.load(ordering: .relaxed), UInt8(truncatingIfNeeded: 1 + total))
    XCTAssertTrue(counter.flag.load(ordering: .relaxed), "untouched neighbour")
  }

  /// Message passing: a releasing store publishes a plain write, an acquiring load that sees it
  /// may read it. Under ThreadSanitizer this fails with a data race unless TSan sees the
  /// orderings of the C atomics, in debug builds (where they are calls) as in optimized ones
  /// (checked: with both orderings relaxed, TSan reports the race on `payload`).
  func testReleaseAcquirePublishesPlainWrites() {
    for _ in 0..<TestScale.stress(200, sanitizerDivisor: 10) {
      let mailbox = Mailbox()
      let reader = DispatchQueue(label: "reader")
      let done = DispatchSemaphore(value: 0)
      reader.async {
        while !mailbox.ready.load(ordering: .acquiring) {}
        let seen = mailbox.payload  // read here, not in XCTAssert's autoclosure, for TSan to see it
        XCTAssertEqual(seen, 42)
        done.signal()
      }
      mailbox.payload = 42
      mailbox.ready.store(true, ordering: .releasing)
      done.wait()
    }
  }
}

private let globalCounter = InlineAtomic<UInt>(0)

private final class AtomicHolder: Sendable {
  let narrow = InlineAtomic<UInt8>(1)
  let wide = InlineAtomic<UInt64>(2)
  let flag = InlineAtomic<Bool>(true)
  let pointer = InlineAtomic<UnsafeMutableRawPointer?>(nil)

  func addresses() -> [UInt] {
    [
      narrow.withAddress { UInt(bitPattern: $0) },
      wide.withAddress { UInt(bitPattern: $0) },
      flag.withAddress { UInt(bitPattern: $0) },
      pointer.withAddress { UInt(bitPattern: $0) },
    ]
  }
}

private final class ByteHolder: Sendable {
  let word = InlineAtomic<UInt>(7)
  let flag = InlineByteAtomic<Bool>(false)
  let byte = InlineByteAtomic<UInt8>(255)
}

private final class Mailbox: @unchecked Sendable {
  var payload = 0  // published by `ready`
  let ready = InlineAtomic<Bool>(false)
}
