/// A coroutine is cancellable like the other items of a `CoScope`: `startCoroutine(in:)` adds it.
extension CoroutineContext: CoCancellable {
  @usableFromInline func whenComplete(_ callback: @escaping () -> Void) { whenFinished(callback) }
}
