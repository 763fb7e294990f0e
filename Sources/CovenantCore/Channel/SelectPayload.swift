/// The typed part of a kept `select` case: its operation (a send's element) and its body.
@usableFromInline
struct SelectPayload<Operation: ChannelOperation, Output> {
  @usableFromInline let operation: Operation
  @usableFromInline let body: SelectCaseBody<Operation.Value, Output>

  @inlinable init(_ operation: Operation, _ body: SelectCaseBody<Operation.Value, Output>) {
    self.operation = operation
    self.body = body
  }
}

/// Room for one `SelectPayload` whose type is erased where the select keeps it: 48 bytes,
/// 8-byte aligned, holding the payload itself when it fits, else a reference to a box holding
/// it (the `ValueBox` a promise's cell uses for a value too large for it). Only code that knows
/// the payload's type (`SelectSlotOperations`) reads or writes it.
///
/// The storage does not own what it holds: the slot that contains it initializes it once
/// (`initialize`) and deinitializes it once (`take` or `destroy`). Copying the storage copies
/// bits, so it must be moved with its slot, never duplicated.
@usableFromInline
struct SelectPayloadStorage {
  @usableFromInline var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

  @inlinable init() {}

  /// Whether a `T` is kept in the storage itself (else boxed).
  @inlinable static func holdsInline<T>(_ type: T.Type) -> Bool {
    MemoryLayout<T>.size <= MemoryLayout<SelectPayloadStorage>.size
      && MemoryLayout<T>.alignment <= MemoryLayout<SelectPayloadStorage>.alignment
  }

  /// Stores `value` in the uninitialized storage at `storage`.
  @inlinable static func initialize<T>(
    _ storage: UnsafeMutablePointer<SelectPayloadStorage>, to value: T
  ) {
    let raw = UnsafeMutableRawPointer(storage)
    if holdsInline(T.self) {
      assert(Int(bitPattern: raw) % MemoryLayout<T>.alignment == 0, "misaligned select payload")
      raw.initializeMemory(as: T.self, to: value)
    } else {
      raw.initializeMemory(as: ValueBox<T>.self, to: ValueBox(value))
    }
  }

  /// The `T` stored at `storage` (which stays initialized).
  @inlinable static func read<T>(
    _ storage: UnsafeMutablePointer<SelectPayloadStorage>, as type: T.Type
  ) -> T {
    let raw = UnsafeMutableRawPointer(storage)
    if holdsInline(T.self) { return raw.assumingMemoryBound(to: T.self).pointee }
    return raw.assumingMemoryBound(to: ValueBox<T>.self).pointee.value
  }

  /// Destroys the `T` stored at `storage`, leaving it uninitialized.
  @inlinable static func destroy<T>(
    _ storage: UnsafeMutablePointer<SelectPayloadStorage>, as type: T.Type
  ) {
    let raw = UnsafeMutableRawPointer(storage)
    // `move()` rather than `deinitialize(count:)`: the value is then destroyed as a value of
    // a known type, not through its metadata.
    if holdsInline(T.self) {
      _ = raw.assumingMemoryBound(to: T.self).move()
    } else {
      _ = raw.assumingMemoryBound(to: ValueBox<T>.self).move()
    }
  }
}
