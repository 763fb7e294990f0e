/// Errors thrown by coroutine operations.
public enum CoroutineError: Error, Equatable, Sendable {
  /// The coroutine was cancelled (directly, or through the `CoScope` it was started in). A
  /// pending `await` throws this promptly; every later `await` throws it at once.
  case canceled
  /// An `await` was called outside a coroutine.
  case calledOutsideCoroutine
}
