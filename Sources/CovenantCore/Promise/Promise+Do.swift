import Dispatch

extension Promise {
  /// Creates a pending promise, runs `work` asynchronously on `queue` and fulfils the promise
  /// with what it returns, or rejects it with what it throws. A returned error rejects it, as
  /// for `then` (see `then`).
  ///
  /// ```swift
  /// let checksum = Promise<UInt32>(on: .global()) { try crc32(of: file) }
  /// ```
  ///
  /// Disfavored against the promise-returning form below, so that a block returning a promise
  /// adopts it even when nothing states `Value` (`Promise { fetchUser(id) }` is a
  /// `Promise<User>`), and a block that only throws (`Promise<Int> { throw E() }`) is not
  /// ambiguous: it rejects, whichever form runs it.
  @_disfavoredOverload
  public convenience init(
    on queue: DispatchQueue = .promises, _ work: @escaping @Sendable () throws -> Value
  ) {
    self.init()
    retainUntilResolved()
    PromiseDispatch.async(on: queue) { [self] in
      do { fulfillReturned(try work()) } catch { reject(error) }
    }
  }

  /// Creates a pending promise, runs `work` asynchronously on `queue` and adopts the outcome of
  /// the promise it returns, or rejects it with what it throws.
  public convenience init(
    on queue: DispatchQueue = .promises, _ work: @escaping @Sendable () throws -> Promise<Value>
  ) {
    self.init()
    retainUntilResolved()
    PromiseDispatch.async(on: queue) { [self] in
      do { settle(.adopt(try work())) } catch { reject(error) }
    }
  }
}
