/// Which await a timer was armed for and how it resumes it, packed into the word a
/// `TimerEntry` carries.
struct TimerToken {
  let rawValue: UInt64

  init(generation: UInt64, reason: UInt64) {
    assert(reason == 0 || reason == WaitState.timedOutWake, "a timer resumes or times out")
    rawValue = generation << 1 | (reason == 0 ? 0 : 1)
  }

  init(rawValue: UInt64) { self.rawValue = rawValue }

  var generation: UInt64 { rawValue >> 1 }
  var reason: UInt64 { rawValue & 1 == 0 ? 0 : WaitState.timedOutWake }
}
