/// One `whenFinished` callback of a coroutine, linked to the one added before it (see
/// `CoroutineContext.whenFinished`).
final class CompletionCallback {
  let callback: () -> Void
  /// The node added before this one, retained (`none` for the first).
  var next = CallbackBits.none

  init(_ callback: @escaping () -> Void) { self.callback = callback }
}
