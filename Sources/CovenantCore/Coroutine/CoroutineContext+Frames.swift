import CCoroutineContext

extension Coroutine {
  /// The fiber of the coroutine running this code (`nil` outside a coroutine), for tests and
  /// diagnostics inside the package: `cov_fiber_frames` and `cov_fiber_copy_frames` tell
  /// where its frames are (in place or copied out), `cov_fiber_is_shared` its stack mode. The
  /// pointer stays valid until the coroutine has finished.
  package static var currentFiber: OpaquePointer? { CoroutineContext.current?.fiber }
}

extension Coroutine {
  /// The address of the object of the coroutine running this code (`nil` outside one), for the
  /// test that keeps its size in check: every suspended coroutine carries it.
  package static var currentObjectAddress: UnsafeRawPointer? {
    CoroutineContext.currentUnmanaged.map { UnsafeRawPointer($0.toOpaque()) }
  }
}
