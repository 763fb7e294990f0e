/// One coroutine's "am I waiting, and who woke me" word: the per-await state machine that makes
/// resumption exactly-once, whatever thread resumes and whenever.
///
/// Layout: `generation << 8 | flags`. Each `suspend` starts a new generation, so a waker from an
/// earlier await can never touch a later one. Within a generation:
/// - `claimed`: some party won the right to resume (a value delivery, a timer, a cancel);
///   every other claim fails. Claims happen *before* the winner delivers its value.
/// - `woken`: the winner finished delivering; the coroutine may continue.
/// - `suspended`: the coroutine's stack is no longer in use (set by the runner after the switch
///   out), so whoever sets `woken` second must schedule it.
/// - `canceledWake`: the claim was made by `cancel()`; the await throws `.canceled`.
/// - `timedOutWake`: the claim was made by the await's own timer; a timed wait reports a
///   timeout.
/// - `abandoned`: set on an await that was not claimed when the only thing that could resume it
///   (a callback handed out by `Coroutine.await`) was released uncalled: nothing but a cancel
///   can end it now. Coroutine snapshots report such a coroutine as leaked.
///
/// `woken` and `suspended` are set with one atomic OR each; exactly one of the two parties sees
/// the other's bit and continues the coroutine, so no wake-up is lost and none is doubled.
struct WaitState: ~Copyable {
  static let claimed: UInt64 = 1
  static let woken: UInt64 = 2
  static let suspended: UInt64 = 4
  static let canceledWake: UInt64 = 8
  static let timedOutWake: UInt64 = 16
  static let abandoned: UInt64 = 32
  private static let flagBits: UInt64 = 8

  /// Starts as generation 0, claimed: nothing can wake a coroutine that is not waiting.
  private let word = InlineAtomic<UInt64>(WaitState.claimed | WaitState.woken)

  /// Opens the next generation (called by the coroutine itself, only when not claimable).
  func begin(_ generation: UInt64) {
    assert(
      word.load(ordering: .relaxed) & Self.claimed != 0,
      "an await opens only once the previous one was claimed (nothing can claim it any more)")
    assert(
      generation == currentGeneration &+ 1, "an await opens the generation after the last one")
    word.store(generation << Self.flagBits, ordering: .sequentiallyConsistent)
  }

  var currentGeneration: UInt64 { word.load(ordering: .sequentiallyConsistent) >> Self.flagBits }

  var flags: UInt64 { word.load(ordering: .acquiring) & ((1 << Self.flagBits) - 1) }

  /// Wins the right to resume generation `generation`, or returns false. `reason` is
  /// `canceledWake`, `timedOutWake` or 0 (a delivery).
  func claim(_ generation: UInt64, reason: UInt64 = 0) -> Bool {
    assert(
      reason == 0 || reason == Self.canceledWake || reason == Self.timedOutWake,
      "a claim is a delivery, a cancel or a timeout")
    var current = word.load(ordering: .relaxed)
    let extra = Self.claimed | reason
    while current >> Self.flagBits == generation && current & Self.claimed == 0 {
      let (exchanged, original) = word.compareExchange(
        expected: current, desired: current | extra, ordering: .acquiringAndReleasing)
      if exchanged { return true }
      current = original
    }
    return false
  }

  /// Marks await `generation` abandoned if it is still that await and unclaimed (see
  /// `abandoned`); the flag ends with the await.
  func abandon(_ generation: UInt64) {
    var current = word.load(ordering: .relaxed)
    while current >> Self.flagBits == generation && current & Self.claimed == 0 {
      let (exchanged, original) = word.compareExchange(
        expected: current, desired: current | Self.abandoned, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }

  /// Marks the claimed await as woken. Returns true if the coroutine had already suspended, in
  /// which case the caller must schedule it.
  func wake() -> Bool {
    let old = word.bitwiseOr(Self.woken, ordering: .acquiringAndReleasing).oldValue
    assert(old & Self.claimed != 0, "only the claim winner wakes an await")
    assert(old & Self.woken == 0, "an await is woken once")
    return old & Self.suspended != 0
  }

  /// Marks the coroutine's stack as free. Returns true if it was woken meanwhile, in which case
  /// the caller must continue it at once.
  func confirmSuspended() -> Bool {
    let old = word.bitwiseOr(Self.suspended, ordering: .acquiringAndReleasing).oldValue
    assert(old & Self.suspended == 0, "a coroutine switches out once per await")
    return old & Self.woken != 0
  }
}
