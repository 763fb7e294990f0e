/// What a coroutine snapshot reads of a coroutine (Debugging reads the coroutine layer, never
/// the other way round).
extension CoroutineContext {
  /// What a coroutine snapshot reads of the coroutine, from the snapshot's thread, while the
  /// registry keeps the coroutine from finishing (`cov_registry_visit`). Only immutable fields
  /// and atomics are read; the scheduler is retained for the snapshot (a hop keeps the old one
  /// alive until no snapshot reads it).
  func debugFields() -> CoroutineDebugFields {
    let queue = queueWord.load(ordering: .sequentiallyConsistent)
    let identity = schedulerIdentityWord.load(ordering: .sequentiallyConsistent)
    let word = fiberOrRequestWord.load(ordering: .acquiring)
    return CoroutineDebugFields(
      queue: queue.isNone ? nil : UnsafeRetainedBits(retaining: queue.unmanaged),
      schedulerObject: !queue.isNone || identity == 0
        ? nil
        : UnsafeRetainedBits(
          retaining: Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: identity)!)),
      fiber: word & 1 == 0 ? OpaquePointer(bitPattern: word) : nil,
      startFile: startFile, startLine: startLine,
      scope: scopeLink?.scope.map(ObjectIdentifier.init), waitFlags: wait.flags)
  }
}
