import CovenantCore
import NIOCore

extension CoFuture {
  /// A Covenant future with `future`'s outcome, without a hop: it completes synchronously in
  /// NIO's completion callback, on the future's loop thread (inside a turn of that loop).
  ///
  /// Cancelling the returned `CoFuture` fails it (and its awaiters) with
  /// `CoFutureError.canceled` at once; the NIO future cannot be cancelled and its eventual
  /// outcome is ignored. NIO errors pass through unchanged.
  public convenience init(_ future: EventLoopFuture<Value>) {
    let loop = future.eventLoop
    self.init { complete in
      future.whenComplete { result in
        completeInTurn(of: loop) { complete(result) }
      }
    }
  }

  /// An `EventLoopFuture` on `eventLoop` with this future's outcome. No hop when this future
  /// completes on `eventLoop`'s thread; otherwise NIO moves the completion to the loop.
  ///
  /// Cancelling this future fails the NIO future with `CoFutureError.canceled`; a pending
  /// `CoFuture` that is deallocated counts as cancelled (Covenant's rule), so the NIO future
  /// never stays pending forever.
  public func eventLoopFuture(on eventLoop: any EventLoop) -> EventLoopFuture<Value>
  where Value: Sendable {
    if let result { return eventLoop.makeCompletedFuture(result) }
    let completion = EventLoopPromiseCompletion(eventLoop.makePromise(of: Value.self))
    whenComplete { result in completion.complete(result) }
    return completion.futureResult
  }
}
