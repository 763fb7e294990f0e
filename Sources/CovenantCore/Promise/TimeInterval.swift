/// A number of seconds, as google/promises' `delay(_:)`, `timeout(_:)`, `retry(delay:)` and
/// `waitForPromises(timeout:)` take it.
///
/// The same type as Foundation's `TimeInterval` (both are `Double`), declared here so that the
/// core compiles without Foundation: a file that imports both Foundation and Covenant can still
/// write `TimeInterval`, and values pass between the two freely.
///
/// ```swift
/// let patience: TimeInterval = 2.5
/// fetchUser(id).timeout(patience)
/// ```
public typealias TimeInterval = Double
