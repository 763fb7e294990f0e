extension CoFuture {
  /// A future with `promise`'s outcome, in O(1): it observes the promise synchronously, so it
  /// completes on the thread that resolves the promise, with no queue hop.
  ///
  /// Cancelling the future rejects the promise with `CoFutureError.canceled`.
  public convenience init(_ promise: Promise<Value>) {
    if let result = promise.result {
      self.init(result: result)
      return
    }
    self.init()
    promise.whenResolved { [self] in resolve($0) }
    whenResolved { [weak promise] result in
      if result.isCoFutureCancellation { promise?.reject(CoFutureError.canceled) }
    }
  }

  /// A `Promise` with this future's outcome, in O(1) and without a hop (the promise is resolved
  /// synchronously when the future completes). Each access makes a new promise.
  public var promise: Promise<Value> { Promise(self) }
}

extension Promise {
  /// A promise with `future`'s outcome, in O(1) and without a hop: it is resolved synchronously
  /// on the thread that completes the future (blocks chained on it still run on their queues,
  /// as always).
  public convenience init(_ future: CoFuture<Value>) {
    if let result = future.result {
      self.init(result: result)
      return
    }
    self.init()
    future.whenResolved { [self] in resolve($0) }
  }
}
