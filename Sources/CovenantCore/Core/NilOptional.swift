/// Whether `value` is an optional holding nothing (`Optional<T>.none`, whatever `T`).
///
/// A metatype check rather than a cast of the value: casting an optional to a protocol
/// unwraps it, so `nil` would never reach the conformance.
func isNilOptional<T>(_ value: T) -> Bool {
  guard let optionalType = T.self as? any OptionalValue.Type else { return false }
  return withUnsafePointer(to: value) { optionalType.isNone(at: UnsafeRawPointer($0)) }
}

/// `Optional`, whatever it wraps: lets generic code ask whether a value of an unknown type is
/// `nil`.
protocol OptionalValue {
  /// Whether the optional stored at `pointer` (of this type) is `nil`.
  static func isNone(at pointer: UnsafeRawPointer) -> Bool
}

extension Optional: OptionalValue {
  static func isNone(at pointer: UnsafeRawPointer) -> Bool {
    pointer.assumingMemoryBound(to: Self.self).pointee == nil
  }
}
