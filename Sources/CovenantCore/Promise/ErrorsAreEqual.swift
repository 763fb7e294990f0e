/// Same dynamic type, then `==` when that type is `Equatable` (except for types that compare
/// by identity, `NSObject`s: see `ErrorComparedByDomainAndCode`), else the error domain and code
/// (what `NSError` compares, read here without Foundation).
func errorsAreEqual(_ lhs: any Error, _ rhs: any Error) -> Bool {
  let lhsType: Any.Type = type(of: lhs)
  let rhsType: Any.Type = type(of: rhs)
  guard ObjectIdentifier(lhsType) == ObjectIdentifier(rhsType) else { return false }
  if !(lhsType is any ErrorComparedByDomainAndCode.Type), let lhs = (lhs as Any) as? any Equatable {
    return lhs.isEqual(to: rhs)
  }
  return lhs._domain == rhs._domain && lhs._code == rhs._code
}

/// Types whose `==` is object identity unless a subclass overrides it (`NSObject`, made to
/// conform by `CovenantFoundation`): as errors they are compared by domain and code instead.
package protocol ErrorComparedByDomainAndCode {}

extension Equatable {
  fileprivate func isEqual(to other: Any) -> Bool { (other as? Self) == self }
}
