import CCoroutineContext
import CCovenantShims

/// The payload of a `ResolutionCell`: a value in its three words or in a `ValueBox`, an error in
/// its first word.
extension ResolutionCell {
  /// Whether values are stored in the three words (else in a `ValueBox`): values that fit and
  /// may be moved bit for bit. A value that is not bitwise-takable (on Apple platforms, one
  /// holding a `weak` reference to an Objective-C-compatible object, whose runtime record
  /// points at the variable's address) must stay at one address: it is boxed.
  @inlinable package static func storesInline<Value>(_ type: Value.Type) -> Bool {
    MemoryLayout<Value>.size <= 3 * MemoryLayout<UInt>.stride
      && MemoryLayout<Value>.alignment <= MemoryLayout<UInt>.alignment
      && (_isPOD(Value.self) || _isBitwiseTakable(Value.self))
  }

  // The payload crosses between typed values and the atomic words through a scratch tuple on
  // the stack, touched only through a pointer laundered by the out-of-line `cov_opaque_pointer`
  // (typed initialization, raw word loads and stores). Without the laundering the optimizer
  // knows the pointer is the `(UInt, UInt, UInt)` variable, and may forward that variable's
  // initial zeros past the typed store into the raw loads: a release-mode miscompile we hit
  // (`Promise(MyError.failed).error` crashed). Not `withUnsafeTemporaryAllocation`, which is
  // correct but, in unspecialized code, asks the runtime for `Result` metadata on every call
  // (its cost per chained `then` is in the Performance article, "Design choices and what they
  // save"). The two helpers below are the only places that make such a pointer; the storage
  // rules are checked by `ResolutionCellTests` (values of 0 to 48 bytes, errors with payloads),
  // which CI runs in release builds too, where the miscompile showed.

  /// Runs `body` with three words of scratch space on the stack, through a pointer the
  /// optimizer cannot relate to the variable (see above).
  @inlinable @inline(__always)
  static func withScratchWords<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
    var scratch: (UInt, UInt, UInt) = (0, 0, 0)
    return withUnsafeMutableBytes(of: &scratch) { body(cov_opaque_pointer($0.baseAddress!)!) }
  }

  /// `withScratchWords` with one word, for an error.
  @inlinable @inline(__always)
  static func withScratchWord<Result>(_ body: (UnsafeMutableRawPointer) -> Result) -> Result {
    var scratch: UInt = 0
    return withUnsafeMutableBytes(of: &scratch) { body(cov_opaque_pointer($0.baseAddress!)!) }
  }

  @inlinable func storeValue<Value>(_ value: Value) {
    if !Self.storesInline(Value.self) || !_isPOD(Value.self) {
      payloadNeedsDestroy.store(true, ordering: .relaxed)
    }
    if Self.storesInline(Value.self) {
      Self.withScratchWords { raw in
        raw.initializeMemory(as: Value.self, to: value)  // owned by the words from here on
        storeWords(from: raw)
      }
    } else {
      word0.store(UnsafeRetainedBits(retaining: ValueBox(value)).unsafeWord, ordering: .relaxed)
    }
  }

  @inlinable func storeWords(from raw: UnsafeMutableRawPointer) {
    let word = MemoryLayout<UInt>.stride
    word0.store(raw.load(as: UInt.self), ordering: .relaxed)
    word1.store(raw.load(fromByteOffset: word, as: UInt.self), ordering: .relaxed)
    word2.store(raw.load(fromByteOffset: 2 * word, as: UInt.self), ordering: .relaxed)
  }

  @inlinable func loadWords(into raw: UnsafeMutableRawPointer) {
    let word = MemoryLayout<UInt>.stride
    raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
    raw.storeBytes(of: word1.load(ordering: .relaxed), toByteOffset: word, as: UInt.self)
    raw.storeBytes(of: word2.load(ordering: .relaxed), toByteOffset: 2 * word, as: UInt.self)
  }

  /// The value of a fulfilled cell (read after an acquiring `status` load): a copy.
  @inlinable package func loadValue<Value>(as type: Value.Type) -> Value {
    if Self.storesInline(Value.self) {
      return Self.withScratchWords { raw in
        loadWords(into: raw)
        return raw.load(as: Value.self)
      }
    }
    return boxBits(as: Value.self).borrow { $0.value }
  }

  @inlinable func storeError(_ error: any Error) {
    payloadNeedsDestroy.store(true, ordering: .relaxed)
    Self.withScratchWord { raw in
      raw.initializeMemory(as: (any Error).self, to: error)  // owned by the word from here on
      word0.store(raw.load(as: UInt.self), ordering: .relaxed)
    }
  }

  /// The error of a rejected cell (read after an acquiring `status` load): a copy.
  @inlinable package func loadError() -> any Error {
    return Self.withScratchWord { raw in
      raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
      return raw.load(as: (any Error).self)
    }
  }

  @inlinable func destroyValue<Value>(as type: Value.Type) {
    if Self.storesInline(Value.self) {
      guard !_isPOD(Value.self) else { return }
      Self.withScratchWords { raw in
        loadWords(into: raw)
        raw.bindMemory(to: Value.self, capacity: 1).deinitialize(count: 1)
      }
    } else {
      boxBits(as: Value.self).release()
    }
  }

  @inlinable func destroyError() {
    Self.withScratchWord { raw in
      raw.storeBytes(of: word0.load(ordering: .relaxed), as: UInt.self)
      raw.bindMemory(to: (any Error).self, capacity: 1).deinitialize(count: 1)
    }
  }

  /// The box of a value too large for the words: the first word owns it (a union of a value's
  /// bits, an error's and a box's, decided by the type; only the box is a retained reference).
  @inlinable @inline(__always)
  func boxBits<Value>(as type: Value.Type) -> UnsafeRetainedBits<ValueBox<Value>> {
    UnsafeRetainedBits(unsafeWord: word0.load(ordering: .relaxed))
  }
}

/// A value too large for a cell's three words, or a `select` payload too large for its slot
/// (`SelectPayloadStorage`).
@usableFromInline
final class ValueBox<Value> {
  @usableFromInline let value: Value
  @inlinable init(_ value: Value) { self.value = value }
}
