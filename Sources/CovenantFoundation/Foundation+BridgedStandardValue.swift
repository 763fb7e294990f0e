import CovenantCore
import Foundation

// Foundation's value types that bridge to Objective-C objects on Apple platforms count as
// values even when given a retroactive `Error` conformance, like the standard library's (see
// `BridgedStandardValue` in CovenantCore).

extension CGFloat: BridgedStandardValue {}
extension Decimal: BridgedStandardValue {}
extension Data: BridgedStandardValue {}
extension Date: BridgedStandardValue {}
extension DateComponents: BridgedStandardValue {}
extension DateInterval: BridgedStandardValue {}
extension URL: BridgedStandardValue {}
extension URLComponents: BridgedStandardValue {}
extension URLQueryItem: BridgedStandardValue {}
extension UUID: BridgedStandardValue {}
extension IndexPath: BridgedStandardValue {}
extension IndexSet: BridgedStandardValue {}
extension Locale: BridgedStandardValue {}
extension TimeZone: BridgedStandardValue {}
extension Calendar: BridgedStandardValue {}
extension CharacterSet: BridgedStandardValue {}
extension Notification: BridgedStandardValue {}
extension PersonNameComponents: BridgedStandardValue {}
extension Measurement: BridgedStandardValue {}
#if canImport(Darwin)
  // Elsewhere it lives in FoundationNetworking, which this package does not link.
  extension URLRequest: BridgedStandardValue {}
#endif
