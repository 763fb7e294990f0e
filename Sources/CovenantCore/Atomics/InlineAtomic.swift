import CCovenantShims

/// Eight bytes of storage whose address never changes while it is borrowed.
///
/// `@_rawLayout` makes the type address-only: Swift never loads it into registers or copies it
/// to a temporary, so a borrow of it (`withUnsafePointer(to:)`) is the storage inside the object
/// that holds it, the address the C atomics need. The layout does not depend on a generic
/// parameter, so its metadata is static on every OS version (no runtime layout function).
@_rawLayout(like: UInt64)
@usableFromInline
package struct AtomicStorage: ~Copyable {
  @inlinable init() {}
}

/// One byte of storage, as ``AtomicStorage`` is eight: for ``InlineByteAtomic``.
@_rawLayout(like: UInt8)
@usableFromInline
package struct AtomicByteStorage: ~Copyable {
  @inlinable init() {}
}

/// An atomic value stored inline in its owner (a class's `let` property, a struct that is one),
/// on every platform the same code: C11 atomics (`cov_atomics.h`) on an ``AtomicStorage``.
///
/// It replaces `Synchronization.Atomic`, which needs iOS 18, tvOS 18, watchOS 11, visionOS 2 and
/// macOS 15, with the same operation names (``AtomicOperations``). Declare it with `let` (an
/// atomic is never assigned: it is changed through its operations, each of which borrows it).
/// A global is better a ``GlobalAtomic``: a global `InlineAtomic` is initialised lazily.
///
/// ```swift
/// final class Flag: Sendable {
///   private let raised = InlineAtomic<Bool>(false)
///   func raise() -> Bool { !raised.exchange(true, ordering: .acquiringAndReleasing) }
/// }
/// ```
// `@unchecked Sendable`: the storage is reached only through atomic operations. (A value that
// stands for an object, `UnsafeRetainedBits`, carries no more than the bits: who may use the
// object is the holder's rule.)
@usableFromInline
package struct InlineAtomic<Value: InlineAtomicValue>: AtomicOperations, ~Copyable,
  @unchecked Sendable
{
  /// The value's bits, in its first 1, 4 or 8 bytes.
  @usableFromInline let storage: AtomicStorage

  @inlinable @inline(__always)
  package init(_ initialValue: Value) {
    storage = AtomicStorage()
    store(initialValue, ordering: .relaxed)
  }

  /// An atomic whose storage is not initialized yet: its owner stores its first value (with
  /// `store`) before anything reads it, once the owner itself is initialized. For atomics in a
  /// class, whose initializer would otherwise build each one in a temporary and move it into the
  /// object through an opaque call (a call the optimizer cannot see through, which costs the
  /// initializer a retain and a release of its other arguments).
  @inlinable @inline(__always)
  package init(uninitialized: Void) {
    storage = AtomicStorage()
  }

  /// Runs `body` with the storage's address. Borrowing `self` (an address-only type) yields the
  /// storage in place; `storage` is the first and only stored property, at offset 0. (The tests
  /// check that the address is the same on every call and lies inside the owning object.)
  @inlinable @inline(__always)
  package func withAddress<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
    withUnsafePointer(to: storage) { body(UnsafeMutableRawPointer(mutating: $0)) }
  }
}

/// An ``InlineAtomic`` of a one-byte value that takes one byte in its owner instead of eight: for
/// flags that fill the padding of an object (a coroutine, a promise, a cell), whose size is what
/// a million of them cost.
// `@unchecked Sendable`: as `InlineAtomic`.
@usableFromInline
package struct InlineByteAtomic<Value: InlineAtomicByteValue>: AtomicOperations, ~Copyable,
  @unchecked Sendable
{
  @usableFromInline let storage: AtomicByteStorage

  @inlinable @inline(__always)
  package init(_ initialValue: Value) {
    storage = AtomicByteStorage()
    store(initialValue, ordering: .relaxed)
  }

  /// See ``InlineAtomic/init(uninitialized:)``.
  @inlinable @inline(__always)
  package init(uninitialized: Void) {
    storage = AtomicByteStorage()
  }

  /// See ``InlineAtomic/withAddress(_:)``.
  @inlinable @inline(__always)
  package func withAddress<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
    withUnsafePointer(to: storage) { body(UnsafeMutableRawPointer(mutating: $0)) }
  }
}

/// A global atomic: one of the words of static storage numbered in `cov_atomics.h`
/// (`COV_GLOBAL_ATOMIC_...`), zero before the program starts.
///
/// Reading it costs what reading an ``InlineAtomic`` does. A global `InlineAtomic` would be
/// initialised lazily, through `swift_once` (a call, about ten instructions) on every read;
/// `Synchronization.Atomic` globals were initialised statically by the compiler, which knows
/// them. Declare it as a computed global, so nothing is stored in Swift:
///
/// ```swift
/// var defaultStackModeIsDedicated: GlobalAtomic<Bool> {
///   GlobalAtomic(COV_GLOBAL_ATOMIC_DEFAULT_STACK_MODE)
/// }
/// ```
@usableFromInline
package struct GlobalAtomic<Value: InlineAtomicValue>: AtomicOperations, Sendable {
  @usableFromInline let index: Int32

  /// The global atomic `index`, a `COV_GLOBAL_ATOMIC_...` of `cov_atomics.h`; its initial value
  /// is the one whose bits are all zero (`0`, `false`, `nil`).
  @inlinable
  package init(_ index: some BinaryInteger) { self.index = Int32(truncatingIfNeeded: index) }

  @inlinable @inline(__always)
  package func withAddress<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
    body(cov_global_atomic(index))
  }
}

/// The atomic operations, the same for every kind of storage: ``InlineAtomic``,
/// ``InlineByteAtomic`` and ``GlobalAtomic`` each say where their value is (`withAddress`), and
/// the operations run the C function of the value's width on that address (`cov_atomics.h`).
/// Every operation is inlinable and specialized, so what remains is the one C atomic, inline.
@usableFromInline
package protocol AtomicOperations: ~Copyable {
  associatedtype Value: InlineAtomicValue
  /// Runs `body` with the address of the value's bits.
  func withAddress<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result
}

extension AtomicOperations where Self: ~Copyable {
  @inlinable @inline(__always)
  package func load(ordering: AtomicLoadOrder) -> Value {
    withAddress { address in
      switch MemoryLayout<Value>.size {
      case 1: unsafeBitCast(cov_atomic_load_8(address, ordering.rawValue), to: Value.self)
      case 4: unsafeBitCast(cov_atomic_load_32(address, ordering.rawValue), to: Value.self)
      default: unsafeBitCast(cov_atomic_load_64(address, ordering.rawValue), to: Value.self)
      }
    }
  }

  @inlinable @inline(__always)
  package func store(_ value: Value, ordering: AtomicStoreOrder) {
    withAddress { address in
      switch MemoryLayout<Value>.size {
      case 1: cov_atomic_store_8(address, unsafeBitCast(value, to: UInt8.self), ordering.rawValue)
      case 4: cov_atomic_store_32(address, unsafeBitCast(value, to: UInt32.self), ordering.rawValue)
      default:
        cov_atomic_store_64(address, unsafeBitCast(value, to: UInt64.self), ordering.rawValue)
      }
    }
  }

  /// Stores `value` and returns the value it replaced.
  @inlinable
  package func exchange(_ value: Value, ordering: AtomicUpdateOrder) -> Value {
    readModifyWrite(
      value, ordering, cov_atomic_exchange_8, cov_atomic_exchange_32, cov_atomic_exchange_64)
  }

  /// Replaces the value with `desired` if it is `expected` (bit for bit); returns whether it did
  /// and the value found.
  @inlinable
  package func compareExchange(
    expected: Value, desired: Value, ordering: AtomicUpdateOrder
  ) -> (exchanged: Bool, original: Value) {
    compareExchange(
      expected: expected, desired: desired,
      successOrdering: ordering, failureOrdering: ordering.failureOrder)
  }

  /// ``compareExchange(expected:desired:ordering:)`` with the ordering of a failed attempt (a
  /// load) given separately.
  @inlinable
  package func compareExchange(
    expected: Value, desired: Value,
    successOrdering: AtomicUpdateOrder, failureOrdering: AtomicLoadOrder
  ) -> (exchanged: Bool, original: Value) {
    withAddress { address in
      let success = successOrdering.rawValue
      let failure = failureOrdering.rawValue
      switch MemoryLayout<Value>.size {
      case 1:
        let old = unsafeBitCast(expected, to: UInt8.self)
        let found = cov_atomic_compare_exchange_8(
          address, old, unsafeBitCast(desired, to: UInt8.self), success, failure)
        return (found == old, unsafeBitCast(found, to: Value.self))
      case 4:
        let old = unsafeBitCast(expected, to: UInt32.self)
        let found = cov_atomic_compare_exchange_32(
          address, old, unsafeBitCast(desired, to: UInt32.self), success, failure)
        return (found == old, unsafeBitCast(found, to: Value.self))
      default:
        let old = unsafeBitCast(expected, to: UInt64.self)
        let found = cov_atomic_compare_exchange_64(
          address, old, unsafeBitCast(desired, to: UInt64.self), success, failure)
        return (found == old, unsafeBitCast(found, to: Value.self))
      }
    }
  }

  /// Runs the C read-modify-write operation of `Value`'s width (`op8`, `op32` or `op64`: one of
  /// `cov_atomic_exchange_*`, `cov_atomic_fetch_add_*`, …) with `operand`'s bits; returns the
  /// value it replaced. The width is a constant once specialized, so only one call remains.
  @inlinable @inline(__always)
  func readModifyWrite(
    _ operand: Value, _ ordering: AtomicUpdateOrder,
    _ op8: (UnsafeMutableRawPointer?, UInt8, Int32) -> UInt8,
    _ op32: (UnsafeMutableRawPointer?, UInt32, Int32) -> UInt32,
    _ op64: (UnsafeMutableRawPointer?, UInt64, Int32) -> UInt64
  ) -> Value {
    withAddress { address in
      switch MemoryLayout<Value>.size {
      case 1:
        unsafeBitCast(
          op8(address, unsafeBitCast(operand, to: UInt8.self), ordering.rawValue), to: Value.self)
      case 4:
        unsafeBitCast(
          op32(address, unsafeBitCast(operand, to: UInt32.self), ordering.rawValue), to: Value.self)
      default:
        unsafeBitCast(
          op64(address, unsafeBitCast(operand, to: UInt64.self), ordering.rawValue), to: Value.self)
      }
    }
  }
}

extension AtomicOperations where Self: ~Copyable, Value: FixedWidthInteger {
  /// Adds `operand` with wrapping arithmetic; returns the values before and after.
  @inlinable @discardableResult
  package func wrappingAdd(
    _ operand: Value, ordering: AtomicUpdateOrder
  ) -> (oldValue: Value, newValue: Value) {
    let old = readModifyWrite(
      operand, ordering, cov_atomic_fetch_add_8, cov_atomic_fetch_add_32, cov_atomic_fetch_add_64)
    return (old, old &+ operand)
  }

  /// ORs `operand` in; returns the values before and after.
  @inlinable @discardableResult
  package func bitwiseOr(
    _ operand: Value, ordering: AtomicUpdateOrder
  ) -> (oldValue: Value, newValue: Value) {
    let old = readModifyWrite(
      operand, ordering, cov_atomic_fetch_or_8, cov_atomic_fetch_or_32, cov_atomic_fetch_or_64)
    return (old, old | operand)
  }

  /// ANDs `operand` in; returns the values before and after.
  @inlinable @discardableResult
  package func bitwiseAnd(
    _ operand: Value, ordering: AtomicUpdateOrder
  ) -> (oldValue: Value, newValue: Value) {
    let old = readModifyWrite(
      operand, ordering, cov_atomic_fetch_and_8, cov_atomic_fetch_and_32,
      cov_atomic_fetch_and_64)
    return (old, old & operand)
  }
}
