/// Either a value or an error: how `any` reports each promise's outcome.
///
/// ```swift
/// any(fetchAvatar(for: alice), fetchAvatar(for: bob)).then { outcomes in
///   for case .value(let avatar) in outcomes { show(avatar) }
/// }
/// ```
public enum Maybe<Value> {
  /// The promise was fulfilled with this value.
  case value(Value)
  /// The promise was rejected with this error.
  case error(any Error)

  /// Creates `.value(value)`.
  public init(_ value: Value) { self = .value(value) }

  /// Creates `.error(error)`.
  public init(_ error: any Error) { self = .error(error) }

  /// The value, if this is `.value`; else `nil`.
  public var value: Value? {
    if case .value(let value) = self { return value }
    return nil
  }

  /// The error, if this is `.error`; else `nil`.
  public var error: (any Error)? {
    if case .error(let error) = self { return error }
    return nil
  }
}

extension Maybe: Sendable where Value: Sendable {}

extension Maybe: Equatable where Value: Equatable {
  /// Values are equal by `==`. Errors are equal when they have the same type and are equal by
  /// `==` if that type is `Equatable` (and not an `NSObject`), else by `NSError` domain and code.
  public static func == (lhs: Maybe<Value>, rhs: Maybe<Value>) -> Bool {
    switch (lhs, rhs) {
    case (.value(let lhs), .value(let rhs)): return lhs == rhs
    case (.error(let lhs), .error(let rhs)): return errorsAreEqual(lhs, rhs)
    default: return false
    }
  }
}
