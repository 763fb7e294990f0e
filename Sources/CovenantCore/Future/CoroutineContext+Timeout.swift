import Dispatch

extension CoroutineContext {
  /// `suspend(register)` that gives up after `timeout`, throwing `CoFutureError.timeout`.
  ///
  /// The timer competes for the await like any other waker: exactly one of them wins.
  func suspendUntil(
    timeout: DispatchTimeInterval, _ register: (CoroutineWaker) -> Void
  ) throws {
    let timedOut = ResumeSlot<Bool>()
    try suspend { waker in
      register(waker)
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout.clampedToZero) {
        guard waker.claim() else { return }
        timedOut.value = true
        waker.wake()
      }
    }
    if timedOut.value == true { throw CoFutureError.timeout }
  }
}

extension DispatchTimeInterval {
  /// Negative intervals count as zero.
  var clampedToZero: DispatchTimeInterval {
    switch self {
    case .seconds(let n) where n < 0: return .seconds(0)
    case .milliseconds(let n) where n < 0: return .seconds(0)
    case .microseconds(let n) where n < 0: return .seconds(0)
    case .nanoseconds(let n) where n < 0: return .seconds(0)
    default: return self
    }
  }
}
