import CCoroutineContext

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Running a coroutine, on its scheduler's side: the start, the slices (each a switch into the
/// fiber and back), the fiber made on the first slice, and the end.
extension CoroutineContext {
  // MARK: Starting and running (scheduler side)

  /// Registers the coroutine (see `CoroutineRegistry`) and schedules its first slice on its
  /// scheduler.
  @usableFromInline func start() {
    assert(registrySlot == COV_REGISTRY_NO_SLOT, "a coroutine starts once")
    registrySlot = CoroutineRegistry.enter(
      UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()))
    scheduleInline()
  }

  /// `start()` for a coroutine with a name (given at start: `startCoroutine(name:)`), which
  /// snapshots show. Separate, so that the common start passes no optional string around.
  @usableFromInline func start(name: String?) {
    guard let name else { return start() }
    assert(registrySlot == COV_REGISTRY_NO_SLOT, "a coroutine starts once")
    registrySlot = CoroutineRegistry.enter(
      UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), name: name)
    schedule()
  }

  /// Hands the coroutine to its scheduler (through the running task's hand-off slot when that
  /// task serves the same scheduler).
  func schedule() { scheduleInline() }

  /// `schedule()`, inlined where it is on the path of every coroutine (the start).
  @inline(__always)
  func scheduleInline() {
    if let schedulerIdentity, SchedulerTurn.handOff(self, to: schedulerIdentity) {
      return
    }
    scheduleTask()
  }

  /// Always a real `scheduleTask`: used where others must get a turn (`yield`, hops). On a
  /// `DispatchQueue` the coroutine itself is the dispatched item (no closure, no block).
  func scheduleTask() {
    if !queueBits.isNone {
      let queue = queueBits.unmanaged  // no retain: the coroutine keeps it
      if DirectDispatch.isAvailable {
        DirectDispatch.async(
          self, onRawQueue: queue._withUnsafeGuaranteedRef(DirectDispatch.rawQueue))
      } else {
        DirectDispatch.async(self, on: queue.takeUnretainedValue())
      }
    } else {
      otherScheduler!.scheduleTask { [self] in SchedulerTurn.run(self) }
    }
  }

  /// Runs the coroutine until it suspends, hops, yields or finishes. Returns whether it
  /// must run again at once (it was woken while suspending).
  func runSlice() -> Bool {
    let slot = registrySlot
    let fiber: OpaquePointer
    if let existing = self.fiber {
      fiber = existing
      cov_registry_note_resuming(slot, fiber)
    } else {
      // Cancelled before its body started (its scope was, say): the body never runs, as with
      // Kotlin's default start, and no stack is taken. One relaxed load of a byte.
      if _slowPath(isCanceled) {
        endCanceledBeforeStart()
        return false
      }
      // The first slice: the entry still says "created", which snapshots read as running once
      // the fiber exists (no store on the path of coroutines that never switch out).
      guard let made = makeFiber() else { return false }
      fiber = made
    }
    let previous = ThreadSlot.load(ThreadSlot.coroutine)
    ThreadSlot.store(ThreadSlot.coroutine, Unmanaged.passUnretained(self).toOpaque())
    let status = cov_fiber_resume(fiber)
    ThreadSlot.store(ThreadSlot.coroutine, previous)
    // Parked: its shared stack is running another coroutine; that one's switch-out hands this
    // one back to `schedule()` (see `SharedStackParking`).
    if _slowPath(status != Int32(COV_FIBER_RAN)) { return false }
    // The registry entry is written here, after the switch out and before anyone else may
    // resume the coroutine (the wake-up state machine, or the scheduler, hands it on after
    // this), so its writers take turns and a snapshot that sees it switched out sees its
    // frames settled.
    switch exit {
    case .suspend:
      cov_registry_note_switched_out(slot, UInt64(COV_ACTIVITY_SUSPENDED), UInt64(pendingWaitKind))
      return wait.confirmSuspended()
    case .reschedule:
      cov_registry_note_switched_out(slot, UInt64(COV_ACTIVITY_READY), UInt64(pendingWaitKind))
      scheduleTask()
      return false
    case .finished:
      finish()
      return false
    }
  }

  func makeFiber() -> OpaquePointer? {
    let argument = Unmanaged.passUnretained(self).toOpaque()
    let request = stackRequest
    let fiber: OpaquePointer?
    // One group of shared stacks per scheduler (value-type schedulers share the nil group).
    let group = cov_stack_group(currentSchedulerIdentity.flatMap(SchedulerStackSettings.groupKey))
    let configured = group.map { cov_stack_group_is_configured($0) != 0 } == true
    let settings = configured ? SchedulerStackSettings.settings(for: currentSchedulerIdentity) : nil
    if usesSharedStack(request, settings?.mode) {
      SharedStackParking.install()
      // A configured group gets its scheduler's minimum every time (the default if the setting
      // was another scheduler's, at the same address); others keep the default a group starts
      // with, or is reset to when it moves to another scheduler.
      let minimum =
        settings?.sharedStackCount ?? (configured ? Int(cov_shared_stacks_default_min()) : 0)
      fiber = cov_fiber_create_shared(group, minimum, coroutineEntry, argument)
    } else {
      fiber = cov_fiber_create(request.dedicatedSize, coroutineEntry, argument)
    }
    guard let fiber else {
      failToStart(request, errorNumber: errno)
      return nil
    }
    precondition(UInt(bitPattern: fiber) & 1 == 0, "fiber records are at least 2-aligned")
    fiberOrRequestWord.store(UInt(bitPattern: fiber), ordering: .releasing)
    return fiber
  }

  /// Cancelled before its first slice: the coroutine ends without running its body, as one
  /// without a stack does. A future it was to complete (its start-failure receiver:
  /// `coroutineFuture`) fails with `CoroutineError.canceled`, what an await of the body would
  /// have thrown, unless it failed already (a cancelled future); nothing is reported (a
  /// cancellation is no error). Out of line: it rarely happens.
  @inline(never)
  func endCanceledBeforeStart() {
    body = nil
    if let receiver = startFailureReceiver as? any CoroutineStartFailureReceiver {
      receiver.coroutineFailedToStart(CoroutineError.canceled)
    }
    finish()
  }

  /// No stack could be had: the coroutine ends without running its body.
  @inline(never)
  func failToStart(_ request: CoroutineStackRequest, errorNumber: Int32) {
    let error = CoroutineStartError(stackSize: request.dedicatedSize, errorNumber: errorNumber)
    body = nil
    if let receiver = startFailureReceiver as? any CoroutineStartFailureReceiver {
      receiver.coroutineFailedToStart(error)
    } else {
      reportUnstartableCoroutine(error)
    }
    finish()
  }

  /// Whether this coroutine runs on a shared stack: its start's choice, else its scheduler's
  /// (`schedulerMode`), else `Coroutine.defaultStackMode`.
  func usesSharedStack(
    _ request: CoroutineStackRequest, _ schedulerMode: CoroutineStackMode?
  ) -> Bool {
    switch request.raw {
    case CoroutineStackRequest.sharedRaw: return true
    case 0: return (schedulerMode ?? Coroutine.defaultStackMode) == .shared
    default: return false
    }
  }

  /// The body, run on the coroutine's own stack by `coroutineEntry` (inlined there: one frame
  /// less to copy when the coroutine's stack is shared).
  @inline(__always)
  func runBody() {
    let body = self.body.take()  // moved out: no copy of the closure's context
    do { try body?() } catch {
      // A coroutine's error ends it. (Futures started with `coroutineFuture` capture theirs:
      // their bodies never throw.)
      reportUncaught(error)
    }
    exit = .finished
  }

  /// Out of line: inlined, the report's temporaries would enlarge the coroutine's first frame,
  /// which a suspended coroutine on a shared stack keeps in its copy.
  @inline(never)
  func reportUncaught(_ error: any Error) {
    UncaughtErrors.report(error, scope: scopeLink?.scope, file: startFile, line: UInt(startLine))
  }

  /// Marks the coroutine finished and runs the callbacks registered so far, in the order they
  /// were added (later ones run at once in `whenFinished`).
  func finish() {
    CoroutineRegistry.leave(registrySlot)
    registrySlot = COV_REGISTRY_NO_SLOT
    startFailureReceiver = nil
    destroyFiber()
    runFinishCallbacks()
  }

  /// Gives the finished coroutine's stack (a dedicated stack, or a shared stack's copy buffer)
  /// and fiber record back at once, rather than when the last reference to the coroutine goes:
  /// a finished coroutine may be kept for long (by a callback it handed out, a joiner). Called
  /// by `finish()` on the runner's stack, after `cov_fiber_resume` has returned with the fiber
  /// marked finished (the fiber layer allows its destruction from then on), and after the
  /// coroutine has left the registry (no snapshot reads the fiber any more).
  @inline(__always)
  func destroyFiber() {
    let word = fiberOrRequest
    // A coroutine that could not get a stack still holds its request (tagged): no fiber.
    guard word & 1 == 0, let fiber = OpaquePointer(bitPattern: word) else { return }
    fiberOrRequestWord.store(0, ordering: .relaxed)
    cov_fiber_destroy(fiber)
  }
}
