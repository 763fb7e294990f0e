import CovenantCore
import ServiceContextModule

extension ServiceContext {
  /// `ServiceContext.current` as a coroutine-local: bound with its `withValue` inside a
  /// coroutine, the context follows that coroutine across its `await`s, delays and scheduler
  /// hops, into the coroutines it starts and the tasks it makes (`Coroutine.awaitAsync`), and
  /// never reaches another coroutine that runs on the same thread.
  ///
  /// It is bridged to the task-local behind `ServiceContext.current`
  /// (`CoroutineLocal(bridging: ServiceContext.$current)`): while the coroutine runs, the
  /// task-local holds the coroutine's binding, so everything that reads `ServiceContext.current`
  /// sees it — swift-distributed-tracing's `startSpan` (its default parent), swift-log metadata
  /// providers, and async code called with `Coroutine.awaitAsync`. A coroutine started from a
  /// task inherits the task's context.
  ///
  /// ```swift
  /// try ServerBootstrap(group: group).bindCoroutines(host: "0.0.0.0", port: 8080) { connection in
  ///   let span = tracer.startSpan("connection", context: ServiceContext.current ?? .topLevel)
  ///   defer { span.end() }
  ///   try ServiceContext.coroutineCurrent.withValue(span.context) {
  ///     while let line = try connection.readLine() {   // suspends; the span stays bound
  ///       logger.info("request")                       // a provider reading .current sees it
  ///       try connection.write(try handle(line))
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// Inside a coroutine, bind the context with this local's `withValue`, never with
  /// `ServiceContext.withValue` or `Tracer.withSpan`'s synchronous form, when the operation
  /// may suspend the coroutine: those bind the task-local of the thread, not of the coroutine,
  /// so another coroutine resumed on that thread would see the binding. Calling them for code
  /// that does not suspend is fine.
  ///
  /// Declared once for the process (it registers one bridge, see `CoroutineLocal`).
  public static let coroutineCurrent = CoroutineLocal(bridging: ServiceContext.$current)
}
