/// Memory orderings of ``InlineAtomic``'s operations, spelled as Synchronization spells them so
/// that code reads the same; the raw value is C11's `memory_order`, which the C functions of
/// `cov_atomics.h` take.
@usableFromInline
package struct AtomicLoadOrder: Sendable {
  @usableFromInline let rawValue: Int32
  @inlinable init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var relaxed: Self { Self(0) }
  @inlinable package static var acquiring: Self { Self(2) }
  @inlinable package static var sequentiallyConsistent: Self { Self(5) }
}

/// The orderings a store may have (see ``AtomicLoadOrder``).
@usableFromInline
package struct AtomicStoreOrder: Sendable {
  @usableFromInline let rawValue: Int32
  @inlinable init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var relaxed: Self { Self(0) }
  @inlinable package static var releasing: Self { Self(3) }
  @inlinable package static var sequentiallyConsistent: Self { Self(5) }
}

/// The orderings a read-modify-write operation may have (see ``AtomicLoadOrder``).
@usableFromInline
package struct AtomicUpdateOrder: Sendable {
  @usableFromInline let rawValue: Int32
  @inlinable init(_ rawValue: Int32) { self.rawValue = rawValue }

  @inlinable package static var relaxed: Self { Self(0) }
  @inlinable package static var acquiring: Self { Self(2) }
  @inlinable package static var releasing: Self { Self(3) }
  @inlinable package static var acquiringAndReleasing: Self { Self(4) }
  @inlinable package static var sequentiallyConsistent: Self { Self(5) }

  /// The ordering of the load a failed compare-exchange performs: C11 forbids a releasing one.
  @inlinable var failureOrder: AtomicLoadOrder {
    switch rawValue {
    case 3: .relaxed
    case 4: .acquiring
    default: AtomicLoadOrder(rawValue)
    }
  }
}
