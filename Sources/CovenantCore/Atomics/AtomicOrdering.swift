/// A memory ordering of ``InlineAtomic``'s operations, spelled as Synchronization spells them so
/// that code reads the same. The raw value is C11's `memory_order`, which the C functions of
/// `cov_atomics.h` take. One type per kind of operation, so that an ordering the operation does
/// not allow (a releasing load) does not compile.
@usableFromInline
package protocol AtomicOrder: Sendable {
  init(_ rawValue: Int32)
  var rawValue: Int32 { get }
}

extension AtomicOrder {
  @inlinable package static var relaxed: Self { Self(0) }
  @inlinable package static var sequentiallyConsistent: Self { Self(5) }
}

/// The orderings a load may have.
@usableFromInline
package struct AtomicLoadOrder: AtomicOrder {
  @usableFromInline package let rawValue: Int32
  @inlinable package init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var acquiring: Self { Self(2) }
}

/// The orderings a store may have.
@usableFromInline
package struct AtomicStoreOrder: AtomicOrder {
  @usableFromInline package let rawValue: Int32
  @inlinable package init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var releasing: Self { Self(3) }
}

/// The orderings a read-modify-write operation may have.
@usableFromInline
package struct AtomicUpdateOrder: AtomicOrder {
  @usableFromInline package let rawValue: Int32
  @inlinable package init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var acquiring: Self { Self(2) }
  @inlinable package static var releasing: Self { Self(3) }
  @inlinable package static var acquiringAndReleasing: Self { Self(4) }

  /// The ordering of the load a failed compare-exchange performs: C11 forbids a releasing one.
  @inlinable var failureOrder: AtomicLoadOrder {
    switch rawValue {
    case 3: .relaxed
    case 4: .acquiring
    default: AtomicLoadOrder(rawValue)
    }
  }
}
