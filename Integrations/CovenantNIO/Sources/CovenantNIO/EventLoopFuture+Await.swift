import CovenantCore
import NIOCore

extension EventLoopFuture {
  /// Inside a coroutine: suspends it until the future completes, then returns the value or
  /// throws the error. The thread is never blocked — on an event loop, the loop goes on with
  /// other work meanwhile. An already-completed future still resumes through NIO's
  /// `whenComplete` (synchronously, without switching away, when called on its loop).
  ///
  /// The completion is delivered inside a turn of the future's loop, so a coroutine that runs
  /// on that same loop continues right after NIO's callback, in the same loop task, with no
  /// `execute`. A coroutine on another scheduler continues there as usual.
  ///
  /// Not `wait()`: never call NIO's blocking `wait()` on an event loop; this is the coroutine
  /// replacement for it.
  /// - Throws: the future's error; `CoroutineError.calledOutsideCoroutine` outside a
  ///   coroutine; `CoroutineError.canceled` when the coroutine is (or becomes) cancelled while
  ///   waiting — the NIO future itself cannot be cancelled and completes unobserved.
  public func await() throws -> Value {
    let loop = eventLoop
    let result: Result<Value, any Error> = try Coroutine.await { resume in
      whenComplete { result in
        if loop.inEventLoop, let scheduler = SchedulerRegistry.existingScheduler(for: loop) {
          scheduler.runTurn { resume(result) }
        } else {
          resume(result)
        }
      }
    }
    return try result.get()
  }
}
