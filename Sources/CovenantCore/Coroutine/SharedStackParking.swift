import CCoroutineContext

/// Hands coroutines parked on a busy shared stack back to their schedulers.
///
/// A coroutine whose shared stack is running another coroutine (on another thread, or the
/// thread's own outer coroutine) is not run and not waited for: `cov_fiber_resume` parks it
/// on the stack's wait list. The C layer then calls `park` (under the stack's lock: it only
/// retains the coroutine, which nothing else may be holding once its runner returns, and
/// records it as ready in the registry), and,
/// once the stack's occupant has switched out, `unpark` on that thread: the coroutine goes
/// back to its scheduler as if it had just been woken.
enum SharedStackParking {
  /// Installs the hooks (once per process; cheap after the first call).
  static func install() { _ = installed }

  private static let installed: Void = cov_fiber_set_parking_hooks(
    { argument in
      // The parked coroutine's retain, carried by the C layer's `argument` until `unpark`.
      let coroutine = UnsafeRetainedBits(
        retaining: Unmanaged<CoroutineContext>.fromOpaque(argument!))
      // Before the stack's lock is released: the unpark, and so the next resume, come after.
      let slot = coroutine.borrow { $0.registrySlot }
      cov_registry_note_switched_out(
        slot, UInt64(COV_ACTIVITY_READY), UInt64(CoroutineWaitKind.sharedStack.rawValue))
    },
    { argument in
      UnsafeRetainedBits<CoroutineContext>(unsafeContext: argument).take().schedule()
    }
  )
}
