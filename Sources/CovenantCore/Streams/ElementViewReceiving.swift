/// A stage without state: each element alone decides what comes out (`map`, `filter`,
/// `compactMap`). Called from any number of threads at once.
@usableFromInline
protocol ElementStage<Input, Output>: Sendable {
  associatedtype Input
  associatedtype Output
  /// What comes out for `input`; `nil` to drop it.
  func apply(_ input: Input) -> Output?
  /// Whether `apply` may return `nil` (`false` for `map`).
  static var dropsElements: Bool { get }
}

extension ElementStage {
  @inlinable static var dropsElements: Bool { true }
}

/// The source of a receiver with a stage without state: no lock, no allocation; ends, closes
/// and cancellation are the base's own (the stream ends when the base does, with its error).
@usableFromInline
final class ElementViewReceiving<Stage: ElementStage>: ViewReceiving, @unchecked Sendable {
  // `@unchecked Sendable`: immutable; the stage is `Sendable` and the base thread-safe.
  @usableFromInline typealias Element = Stage.Output
  @usableFromInline let base: CoChannel<Stage.Input>.Receiver
  @usableFromInline let stage: Stage
  @usableFromInline let undelivered = UndeliveredOutcomes<Stage.Output>()

  @inlinable init(_ base: CoChannel<Stage.Input>.Receiver, _ stage: Stage) {
    self.base = base
    self.stage = stage
  }

  @inlinable var decidedEnd: CoChannelError? { nil }

  // The receive and poll of every view, written for a stage without state: the stream ends
  // when `base` does, with its error, so errors go through untouched and there is nothing to
  // catch; the rare paths stay out of line. (This is F1's hot path: Benchmarks/README.md.)

  @inlinable
  func awaitReceive() throws -> Stage.Output {
    if !undelivered.isEmpty, let outcome = undelivered.take() { return try outcome.get() }
    while true {
      if let output = stage.apply(try base.awaitReceive()) { return output }
    }
  }

  @inlinable
  func poll() -> Stage.Output? {
    if !undelivered.isEmpty, case .success(let element)? = undelivered.take() { return element }
    while let input = base.poll() {
      if let output = stage.apply(input) { return output }
    }
    return nil
  }

  @inlinable
  func process(_ upstream: Result<Stage.Input, CoChannelError>) -> StageOutcome<Stage.Output> {
    switch upstream {
    case .success(let input):
      if let output = stage.apply(input) { return .element(output) }
      return .skip
    case .failure(let error): return .end(error)
    }
  }

  @usableFromInline var detachedProcess:
    (@Sendable (Result<Stage.Input, CoChannelError>) -> StageOutcome<Stage.Output>)?
  {
    guard !Stage.dropsElements else { return nil }
    let stage = stage
    return { upstream in
      switch upstream {
      case .success(let input):
        if let output = stage.apply(input) { return .element(output) }
        return .skip
      case .failure(let error): return .end(error)
      }
    }
  }

  @usableFromInline var isClosed: Bool { base.isClosed }

  @usableFromInline func cancel() {
    undelivered.removeAll()
    base.cancel()
  }

  @usableFromInline var isCanceled: Bool { base.isCanceled }

  @usableFromInline func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
    base.whenCanceled(callback)
  }

  @usableFromInline func whenComplete(_ callback: @escaping () -> Void) {
    base.whenComplete(callback)
  }
}
