import CovenantCore
import NIOCore

extension Promise {
  /// A Covenant promise with `future`'s outcome, without a hop: it is resolved synchronously
  /// in NIO's completion callback, on the future's loop thread (inside a turn of that loop, so
  /// coroutines of the loop that await it continue in the same loop task). Blocks chained with
  /// `then(on:)` still run on their dispatch queues, as always.
  ///
  /// Errors pass through unchanged. NIO futures have no cancellation, and a `Promise` has none
  /// either, so there is nothing to map.
  public convenience init(_ future: EventLoopFuture<Value>) {
    self.init()
    let loop = future.eventLoop
    future.whenComplete { [self] result in
      completeInTurn(of: loop) { resolve(result) }
    }
  }

  /// An `EventLoopFuture` on `eventLoop` with this promise's outcome. No hop when the promise
  /// is resolved on `eventLoop`'s thread (NIO runs the future's callbacks right there); from
  /// any other thread NIO moves the completion to the loop, as for any `EventLoopPromise`.
  ///
  /// If this promise is deallocated while still pending (nobody can resolve it any more), the
  /// future fails instead of staying pending forever (which NIO reports as a leaked promise):
  /// with `CoFutureError.canceled`, Covenant's error for a future nobody can complete, or
  /// `CovenantNIOError.promiseAbandoned` if the observer itself is dropped unresolved.
  public func eventLoopFuture(on eventLoop: any EventLoop) -> EventLoopFuture<Value>
  where Value: Sendable {
    if let result { return eventLoop.makeCompletedFuture(result) }
    let completion = EventLoopPromiseCompletion(eventLoop.makePromise(of: Value.self))
    // `CoFuture(promise)` observes synchronously (no dispatch queue in between).
    CoFuture(self).whenComplete { result in completion.complete(result) }
    return completion.futureResult
  }
}

/// Completes an `EventLoopPromise` once, or fails it with `promiseAbandoned` if the observer
/// holding it is released without having been called.
final class EventLoopPromiseCompletion<Value: Sendable>: @unchecked Sendable {
  private let promise: EventLoopPromise<Value>
  private var completed = false  // touched once, by the single observer call, before deinit

  init(_ promise: EventLoopPromise<Value>) { self.promise = promise }

  var futureResult: EventLoopFuture<Value> { promise.futureResult }

  func complete(_ result: Result<Value, any Error>) {
    completed = true
    promise.completeWith(result)
  }

  deinit {
    if !completed { promise.fail(CovenantNIOError.promiseAbandoned) }
  }
}

/// Runs `body` inside a turn of `loop`'s coroutine scheduler when there is one and this is its
/// thread, so the coroutines `body` wakes on that loop continue without an `execute`.
func completeInTurn(of loop: any EventLoop, _ body: () -> Void) {
  if loop.inEventLoop, let scheduler = SchedulerRegistry.existingScheduler(for: loop) {
    scheduler.runTurn(body)
  } else {
    body()
  }
}
