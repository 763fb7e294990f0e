/// Value types that bridge to Objective-C objects (`NSString`, `NSNumber`, `NSArray`, `NSData`,
/// …) on Apple platforms: given a retroactive `Error` conformance they still count as values, as
/// they do in google/promises (see `returnedError`).
///
/// The standard library's types conform here; Foundation's (`Data`, `Date`, `URL`, …) conform in
/// `CovenantFoundation`, so the core does not load Foundation. A program that uses `CovenantCore`
/// alone and gives a Foundation value type a retroactive `Error` conformance sees its values
/// reject; with `Covenant` (or `CovenantFoundation`) linked they are values, as above.
package protocol BridgedStandardValue {}

extension String: BridgedStandardValue {}
extension Substring: BridgedStandardValue {}
extension Bool: BridgedStandardValue {}
extension Int: BridgedStandardValue {}
extension Int8: BridgedStandardValue {}
extension Int16: BridgedStandardValue {}
extension Int32: BridgedStandardValue {}
extension Int64: BridgedStandardValue {}
extension UInt: BridgedStandardValue {}
extension UInt8: BridgedStandardValue {}
extension UInt16: BridgedStandardValue {}
extension UInt32: BridgedStandardValue {}
extension UInt64: BridgedStandardValue {}
extension Float: BridgedStandardValue {}
extension Double: BridgedStandardValue {}
extension Array: BridgedStandardValue {}
extension Dictionary: BridgedStandardValue {}
extension Set: BridgedStandardValue {}
extension AnyHashable: BridgedStandardValue {}
