import CovenantCore
import Foundation

extension PromiseError: CustomNSError {
  /// `"dev.covenant.PromiseError"`.
  public static var errorDomain: String { PromiseError.domain }

  /// 1 for `timedOut`, 2 for `validationFailure`.
  public var errorCode: Int { code }
}
