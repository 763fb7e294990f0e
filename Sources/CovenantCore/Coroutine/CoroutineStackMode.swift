/// Where a coroutine's frames live while it runs and while it is suspended.
///
/// ```swift
/// queue.startCoroutine(stackMode: .dedicated) { try serveConnection(socket) }
/// ```
///
/// <doc:Coroutines> ("Stacks") explains the two modes and the rules that come with sharing.
public enum CoroutineStackMode: Sendable, Hashable {
  /// The default. The coroutine runs on one of a few stacks its scheduler's coroutines share.
  /// While it is suspended its frames stay where they are until another coroutine needs that
  /// stack; only then are its used bytes copied to a buffer sized to fit, and they are copied
  /// back to the same addresses before it continues. A suspended coroutine costs its object and
  /// its used bytes (typically well under a kilobyte), and no memory mapping.
  ///
  /// Rules: while it is suspended, no other code may use a pointer into its frames; a coroutine
  /// that blocks its thread delays the coroutines that share its stack.
  case shared
  /// The coroutine has a stack of its own (`Coroutine.defaultStackSize` unless a size is
  /// given), for its whole life: a suspension never copies anything, and pointers into its
  /// frames stay valid for everyone. A suspended coroutine costs at least one page of memory
  /// and, on kernels without `MADV_GUARD_INSTALL`, two of the process's memory mappings.
  case dedicated
}

/// What a start asked for: the mode and size of the coroutine's stack, in one word.
@usableFromInline
struct CoroutineStackRequest: Sendable {
  /// 0: the scheduler's mode (or `Coroutine.defaultStackMode`) and the default size; > 0: a
  /// dedicated stack of that many bytes; `dedicatedDefault`: a dedicated stack of the default
  /// size; `shared`: a shared stack.
  @usableFromInline let raw: Int

  @usableFromInline static let dedicatedDefault = -1
  @usableFromInline static let sharedRaw = -2

  @inlinable init(raw: Int) { self.raw = raw }

  /// Whatever the scheduler (or the default) says.
  @inlinable static var automatic: CoroutineStackRequest { CoroutineStackRequest(raw: 0) }

  /// A start's `stackSize:` argument: `nil` changes nothing; a size asks for a dedicated stack
  /// of that size (at most 0 meaning the default size).
  @inlinable static func size(_ size: Int?) -> CoroutineStackRequest {
    guard let size else { return .automatic }
    return CoroutineStackRequest(raw: size > 0 ? size : dedicatedDefault)
  }

  /// A start's `stackMode:` argument.
  @inlinable static func mode(_ mode: CoroutineStackMode) -> CoroutineStackRequest {
    CoroutineStackRequest(raw: mode == .shared ? sharedRaw : dedicatedDefault)
  }

  /// The size of a dedicated stack to ask the C layer for (0: the default).
  var dedicatedSize: Int { max(0, raw) }
}
