/// The source of a receiver with a stage that keeps state (see `StreamStage`): the stage runs
/// under this receiver's lock, inside each receive.
///
/// The stream's end is the receiver's own: `ended` once the stage or upstream has ended it (a
/// `prefix` that has had its count ends it as `.closed` and cancels its upstream, which must
/// then not read as a cancellation here), with its own `whenCanceled` and `whenComplete`
/// callbacks. Upstream's end is seen when a receive meets it, and, once someone has registered
/// such a callback, as soon as it happens (through callbacks registered on upstream then).
@usableFromInline
final class StatefulViewReceiving<Stage: StreamStage>: ViewReceiving, @unchecked Sendable {
  // `@unchecked Sendable`: the mutable state is inside the mutex; `endCode` is atomic.
  @usableFromInline typealias Element = Stage.Output

  @usableFromInline
  struct State {
    @usableFromInline var stage: Stage
    /// How the stream ended, once it has.
    @usableFromInline var ended: CoChannelError?
    /// Whether the `whenComplete` callbacks have run.
    var isComplete = false
    /// Whether upstream's end is observed (`observeUpstream`).
    var observesUpstream = false
    var cancelCallbacks: [() -> Void] = []
    var completionCallbacks: [() -> Void] = []

    @inlinable init(stage: Stage) { self.stage = stage }
  }

  /// Callbacks that became due under the lock, to run once it is released.
  @usableFromInline
  struct DueCallbacks {
    var callbacks: [() -> Void] = []
    @usableFromInline var cancelsUpstream = false
    @inlinable init() {}
  }

  @usableFromInline let base: CoChannel<Stage.Input>.Receiver
  @usableFromInline let undelivered = UndeliveredOutcomes<Stage.Output>()
  @usableFromInline let state: InlineMutex<State>
  /// `ended`, readable without the lock (`CoChannelError.code`; 0 while open): the receive
  /// paths look at it before each element.
  @usableFromInline let endCode = InlineByteAtomic<UInt8>(0)

  @usableFromInline init(_ base: CoChannel<Stage.Input>.Receiver, _ stage: Stage) {
    self.base = base
    var initial = State(stage: stage)
    // Over before it began (`prefix(0)`): nothing is consumed, so upstream is left alone.
    let isOver = stage.isFinished
    if isOver {
      initial.ended = .closed
      initial.isComplete = true
    }
    state = InlineMutex(initial)
    if isOver { endCode.store(CoChannelError.closed.code, ordering: .relaxed) }
  }

  /// Hears upstream's end from now on: registered once, with the first `whenCanceled` or
  /// `whenComplete` callback (so that a receiver made and dropped on a long-lived channel leaves
  /// nothing in it).
  private func observeUpstream() {
    // Through a non-generic protocol: the callbacks capture no type metadata.
    let observer: any UpstreamEndObserver = self
    base.whenCanceled { [weak observer] in observer?.upstreamCanceled() }
    base.whenComplete { [weak observer] in observer?.upstreamCompleted() }
  }

  @inlinable var decidedEnd: CoChannelError? {
    CoChannelError(code: endCode.load(ordering: .acquiring))
  }

  @inlinable
  func process(_ upstream: Result<Stage.Input, CoChannelError>) -> StageOutcome<Stage.Output> {
    var due = DueCallbacks()
    let outcome = state.withCriticalSection { state -> StageOutcome<Stage.Output> in
      if let ended = state.ended { return .end(ended) }
      switch upstream {
      case .success(let input):
        switch state.stage.receive(input) {
        case .emit(let output): return .element(output)
        case .skip: return .skip
        case .emitLast(let output):
          end(&state, .closed, &due)
          due.cancelsUpstream = true
          return .element(output)
        }
      case .failure(let error):
        let last = error == .canceled ? nil : state.stage.finish(error)
        end(&state, error, &due)
        if let last { return .element(last) }
        return .end(error)
      }
    }
    run(due)
    return outcome
  }

  /// Ends the stream with `error` (under the lock), making its callbacks due.
  @usableFromInline
  func end(_ state: inout State, _ error: CoChannelError, _ due: inout DueCallbacks) {
    state.ended = error
    endCode.store(error.code, ordering: .releasing)
    if error == .canceled {
      due.callbacks += state.cancelCallbacks
    }
    state.cancelCallbacks = []
    if !state.isComplete {
      state.isComplete = true
      due.callbacks += state.completionCallbacks
      state.completionCallbacks = []
    }
  }

  /// Runs what became due, with no lock held.
  @usableFromInline
  func run(_ due: DueCallbacks) {
    if due.cancelsUpstream { base.cancel() }
    for callback in due.callbacks { callback() }
  }

  func upstreamCanceled() {
    var due = DueCallbacks()
    state.withCriticalSection { state in
      if state.ended == nil { end(&state, .canceled, &due) }
    }
    undelivered.removeAll()
    run(due)
  }

  /// Upstream is closed and drained (or cancelled: then `upstreamCanceled` ran first). The
  /// stream is complete too unless the stage still holds elements, which the receive that
  /// meets upstream's end hands over.
  func upstreamCompleted() {
    let callbacks = state.withCriticalSection { state -> [() -> Void] in
      guard !state.isComplete, !state.stage.isHoldingElements else { return [] }
      state.isComplete = true
      defer { state.completionCallbacks = [] }
      return state.completionCallbacks
    }
    for callback in callbacks { callback() }
  }

  @usableFromInline var isClosed: Bool { decidedEnd != nil || base.isClosed }

  @usableFromInline func cancel() {
    var due = DueCallbacks()
    state.withCriticalSection { state in
      if state.ended != .canceled { end(&state, .canceled, &due) }
    }
    undelivered.removeAll()
    run(due)
    base.cancel()
  }

  @usableFromInline var isCanceled: Bool {
    guard let ended = decidedEnd else { return base.isCanceled }
    return ended == .canceled
  }

  @usableFromInline func whenCanceled(_ callback: @escaping @Sendable () -> Void) {
    let (runNow, observe) = state.withCriticalSection { state -> (Bool, Bool) in
      switch state.ended {
      case .canceled?: return (true, false)
      case nil:
        state.cancelCallbacks.append(callback)
        defer { state.observesUpstream = true }
        return (false, !state.observesUpstream)
      case _?: return (false, false)  // ended otherwise: never cancelled now
      }
    }
    if observe { observeUpstream() }
    if runNow { callback() }
  }

  @usableFromInline func whenComplete(_ callback: @escaping () -> Void) {
    let (runNow, observe) = state.withCriticalSection { state -> (Bool, Bool) in
      if state.isComplete { return (true, false) }
      state.completionCallbacks.append(callback)
      defer { state.observesUpstream = true }
      return (false, !state.observesUpstream)
    }
    if observe { observeUpstream() }
    if runNow { callback() }
  }
}

/// What a stage with state hears of its upstream's end (`StatefulViewReceiving`).
protocol UpstreamEndObserver: AnyObject, Sendable {
  /// Upstream was cancelled.
  func upstreamCanceled()
  /// Upstream is complete: closed and drained, or cancelled.
  func upstreamCompleted()
}

extension StatefulViewReceiving: UpstreamEndObserver {}

extension CoChannelError {
  /// A byte for atomics: 0 stands for "none".
  @inlinable var code: UInt8 {
    switch self {
    case .closed: return 1
    case .canceled: return 2
    case .timeout: return 3
    }
  }

  /// The error of `code`; `nil` for 0 (or an unknown code).
  @inlinable init?(code: UInt8) {
    switch code {
    case 1: self = .closed
    case 2: self = .canceled
    case 3: self = .timeout
    default: return nil
    }
  }
}
