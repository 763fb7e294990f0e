/// The C entry point of every coroutine fiber: runs the body, then returns (the fiber layer
/// switches back to the runner and marks the fiber finished).
func coroutineEntry(_ argument: UnsafeMutableRawPointer?) {
  // Strong for the whole body: a suspended coroutine is kept alive by its own frame.
  let context = Unmanaged<CoroutineContext>.fromOpaque(argument!).takeUnretainedValue()
  context.runBody()
}
