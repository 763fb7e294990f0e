import Dispatch

/// The identity a scheduler is matched by (for hand-offs and "already there" checks) — the
/// object for class schedulers, none for value types — and the scheduler itself when it is a
/// `DispatchQueue`.
///
/// Opens the existential once and compares metatypes, instead of casting the value to
/// `AnyObject` (a conformance lookup on every coroutine start).
func classifyScheduler<Scheduler: CoroutineScheduler>(
  _ scheduler: Scheduler
) -> (identity: ObjectIdentifier?, queue: DispatchQueue?) {
  guard Scheduler.self is AnyClass else { return (nil, nil) }
  let object = unsafeBitCast(scheduler, to: AnyObject.self)
  let queue =
    Scheduler.self == DispatchQueue.self ? unsafeDowncast(object, to: DispatchQueue.self) : nil
  return (ObjectIdentifier(object), queue)
}
