/// One `whenFinished` callback of a coroutine, linked to the one added before it (see
/// `CoroutineContext.whenFinished`).
final class CompletionCallback {
  let callback: () -> Void
  /// The bits of the retained previous node, or 0.
  var next: UInt = 0

  init(_ callback: @escaping () -> Void) { self.callback = callback }
}
