/// A type ``InlineAtomic`` can hold: a plain value of 1, 4 or 8 bytes whose bits are all of it
/// (`BitwiseCopyable`), so an atomic operation on the bits is an atomic operation on the value.
///
/// The conformances below are the whole list: each is one of those sizes.
@usableFromInline
package protocol InlineAtomicValue: BitwiseCopyable {}

extension Bool: InlineAtomicValue {}
extension UInt8: InlineAtomicValue {}
extension UInt32: InlineAtomicValue {}
extension UInt64: InlineAtomicValue {}
extension Int: InlineAtomicValue {}
extension UInt: InlineAtomicValue {}
extension Optional: InlineAtomicValue where Wrapped == UnsafeMutableRawPointer {}

/// A one-byte ``InlineAtomicValue``, which ``InlineByteAtomic`` holds in one byte.
@usableFromInline
package protocol InlineAtomicByteValue: InlineAtomicValue {}

extension Bool: InlineAtomicByteValue {}
extension UInt8: InlineAtomicByteValue {}
