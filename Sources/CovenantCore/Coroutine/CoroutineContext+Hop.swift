import CCoroutineContext

/// Moving a coroutine to another scheduler.
extension CoroutineContext {
  /// Moves the coroutine to `scheduler` (it continues in a task there).
  func hop(to scheduler: any CoroutineScheduler) {
    assert(isRunningHere, "only the coroutine itself hops")
    let (identity, queue) = classifyScheduler(scheduler)
    let previousQueue = queueBits
    // A snapshot that has not seen the new scheduler is seen by `cov_registry_quiesce`, which
    // waits for it before the old one is released: the quiesce's sequentially consistent fence
    // orders these stores before its look at the snapshot's flag (the snapshot raises the flag,
    // sequentially consistent, before it reads them), so releasing stores are enough.
    schedulerIdentityWord.store(Self.bits(identity), ordering: .releasing)
    queueWord.store(Self.retainedBits(queue), ordering: .releasing)
    let previousOther = otherScheduler
    otherScheduler = queue == nil ? scheduler : nil
    cov_registry_quiesce(registrySlot)
    if !previousQueue.isNone { previousQueue.release() }
    withExtendedLifetime(previousOther) {}
    pendingWaitKind = CoroutineWaitKind.hop.rawValue
    exit = .reschedule
    cov_fiber_suspend()
  }

  static func bits(_ identity: ObjectIdentifier?) -> UInt {
    identity.map { UInt(bitPattern: $0) } ?? 0
  }

  /// Whether the coroutine runs on `scheduler` (same object) right now.
  func isOn(_ scheduler: any CoroutineScheduler) -> Bool {
    guard let identity = classifyScheduler(scheduler).identity else { return false }
    return identity == currentSchedulerIdentity
  }
}
