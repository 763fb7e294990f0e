import CovenantCore
import Foundation

// `NSObject`'s `==` is identity unless overridden: two `NSError`s with the same domain and code
// are the same error to `Maybe`'s `==`, as in google/promises.
extension NSObject: ErrorComparedByDomainAndCode {}
