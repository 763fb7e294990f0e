import CCoroutineContext

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Thrown when a coroutine cannot get a stack: the address space is exhausted, or the process
/// is close to the kernel's limit on memory mappings (`vm.max_map_count` on Linux), of which
/// Covenant leaves a reserve to the rest of the process.
public struct CoroutineStartError: Error, CustomStringConvertible, Sendable {
  /// The stack size asked for, in bytes (0: the default).
  public let stackSize: Int
  /// The `errno` of the failure (`EAGAIN`: the mapping budget is used up).
  let errorNumber: Int32
  /// The stack mappings Covenant held and the limit it read, at the failure (`EAGAIN` only):
  /// read again later, they would describe another moment.
  let mappingsInUse: Int
  let mappingLimit: Int

  init(stackSize: Int, errorNumber: Int32 = 0) {
    self.stackSize = stackSize
    self.errorNumber = errorNumber
    let budgetExhausted = errorNumber == EAGAIN
    mappingsInUse = budgetExhausted ? Int(cov_stack_mappings_in_use()) : 0
    mappingLimit = budgetExhausted ? Int(cov_stack_max_map_count()) : 0
  }

  /// Describes the failure.
  public var description: String {
    let size = stackSize == 0 ? Int(cov_stack_default_size()) : stackSize
    let head = "Covenant: could not allocate a coroutine stack of \(size) bytes"
    guard errorNumber == EAGAIN else { return head }
    return head
      + ": the process holds \(mappingsInUse) stack mappings, the most it may "
      + "with vm.max_map_count = \(mappingLimit) and a reserve left for the rest "
      + "of the process; use shared stacks (`stackMode: .shared`, the default) or raise "
      + "vm.max_map_count"
  }
}

/// Reports a coroutine that could not start (no `CoroutineStartFailureReceiver`) on stderr.
func reportUnstartableCoroutine(_ error: any Error) {
  writeLineToStandardError("\(error)")
}
