import Dispatch

/// The `onTimeout` of a select: how long it may wait, and what runs when it has waited that long.
@usableFromInline
struct SelectTimeout<Output> {
  @usableFromInline let interval: DispatchTimeInterval
  @usableFromInline let body: () throws -> Output

  @inlinable init(interval: DispatchTimeInterval, body: @escaping () throws -> Output) {
    self.interval = interval
    self.body = body
  }
}
