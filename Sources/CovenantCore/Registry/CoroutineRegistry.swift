import CCoroutineContext

/// The Swift side of the registry of live coroutines and generators (`cov_registry.h`): every
/// coroutine from its start until it finishes, and every started generator until its body ends,
/// holds an entry there, so that `CoroutineSnapshot` can list them while the program runs.
///
/// Registering costs no allocation: slots and serial numbers come from per-thread caches in the
/// C layer. A name given at start is the only thing kept elsewhere (`names`, by serial number),
/// and only for the coroutines that have one.
enum CoroutineRegistry {
  /// The names of named coroutines, by serial number.
  static let names = InlineMutex<[UInt64: String]>([:])

  /// Registers `object` (a `CoroutineContext`, or a generator's control block with
  /// `COV_REGISTRY_GENERATOR` in `tags`) and returns its slot (`COV_REGISTRY_NO_SLOT` if the
  /// table is full: the owner then runs unlisted).
  @inline(__always)
  static func enter(_ object: UnsafeRawPointer, tags: UInt = 0) -> UInt32 {
    cov_registry_enter(UInt(bitPattern: object) | tags)
  }

  /// `enter` for a coroutine with a name, which is kept by serial number.
  static func enter(_ object: UnsafeRawPointer, name: String) -> UInt32 {
    _ = forgetterInstalled
    let slot = cov_registry_enter(UInt(bitPattern: object) | UInt(COV_REGISTRY_NAMED))
    if slot != COV_REGISTRY_NO_SLOT {
      nameCoroutine(cov_registry_entry_id(cov_registry_entry(slot)), name)
    }
    return slot
  }

  @inline(never)
  private static func nameCoroutine(_ id: UInt64, _ name: String) {
    names.withCriticalSection { $0[id] = name }
  }

  /// Unregisters the holder of `slot` (see `cov_registry_leave`); the C layer forgets a named
  /// holder's name through `forgetName`, out of the inlined path.
  @inline(__always)
  static func leave(_ slot: UInt32) {
    cov_registry_leave(slot)
  }

  /// Installed before the first named coroutine registers (once per process).
  private static let forgetterInstalled: Void = cov_registry_set_name_forgetter { id in
    CoroutineRegistry.forgetName(id)
  }

  private static func forgetName(_ id: UInt64) {
    names.withCriticalSection { $0[id] = nil }
  }
}
