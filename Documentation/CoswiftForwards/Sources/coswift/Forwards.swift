// coswift's names, each forwarded to the Covenant construct MigratingFromCoobjc.md maps it to.
// Forwards only: every wait, cancellation and generator step below is Covenant's.
import Covenant
import Dispatch
import Foundation

// MARK: Promise(constructor:) → CoPromise; onCancel → whenCanceled

public typealias Promise<T> = CoPromise<T>

public enum Resolution<T> {
  case fulfilled(T)
  case rejected(Error)
}

extension CoPromise {
  public convenience init(
    constructor: @escaping (@escaping (Value) -> Void, @escaping (Error) -> Void) -> Void
  ) {
    self.init()
    constructor({ self.success($0) }, { self.fail($0) })
  }
  public func fulfill(value: Value) { success(value) }
  public func reject(error: Error) { fail(error) }
  public func onCancel(onCancelBlock: @escaping (CoPromise<Value>) -> Void) {
    whenCanceled { [weak self] in if let self { onCancelBlock(self) } }
  }
}

extension CoFuture {
  @discardableResult
  public func then<U>(work: @escaping (Value) -> U) -> CoFuture<U> { map(work) }
  @discardableResult
  public func then<U>(work: @escaping (Value) -> CoFuture<U>) -> CoFuture<U> { flatMap(work) }
  @discardableResult
  public func `catch`(reject: @escaping (Error) -> Void) -> CoFuture<Value> {
    whenFailure(reject)
    return self
  }
}

// MARK: co_launch → coroutineFuture on the current scheduler; await → await(cancellingOnCancel:)

/// coswift's default queue: the current coroutine's scheduler, else the main queue.
func scheduler(_ queue: DispatchQueue?) -> any CoroutineScheduler {
  queue ?? Covenant.Coroutine.currentScheduler ?? DispatchQueue.main
}

public final class Coroutine {
  let future: CoFuture<Void>
  init(_ future: CoFuture<Void>) { self.future = future }
  public var isCancelled: Bool { future.isCanceled }
  public var isFinished: Bool { future.result != nil }
  public func cancel() { future.cancel() }
  public func join() { try? future.join() }
  public func cancelAndJoin() {
    future.cancel()
    try? future.join()
  }
}

@discardableResult
public func co_launch(queue: DispatchQueue? = nil, block: @escaping () throws -> Void)
  -> Coroutine
{
  Coroutine(scheduler(queue).coroutineFuture(block))
}

public func await<T>(promise: CoFuture<T>) throws -> Resolution<T> {
  do {
    return .fulfilled(try promise.await(cancellingOnCancel: true))
  } catch let error as CoroutineError {
    throw error  // the coroutine was cancelled, or this is not a coroutine
  } catch {
    return .rejected(error)
  }
}

public func await<T>(closure: @escaping () -> CoFuture<T>) throws -> Resolution<T> {
  try coswift.await(promise: closure())
}

public func co_delay(_ seconds: TimeInterval) throws {
  try Covenant.Coroutine.delay(.nanoseconds(Int(seconds * 1e9)))
}

// MARK: Chan → CoChannel

public typealias Chan<T> = CoChannel<T>

extension CoChannel {
  public convenience init(buffCount: Int32) {
    self.init(bufferType: buffCount < 0 ? .unlimited : .buffered(capacity: Int(buffCount)))
  }
  public static func expandable() -> CoChannel { CoChannel(bufferType: .unlimited) }
  public func send(val: Element) throws { try awaitSend(val) }
  public func send_nonblock(val: Element) { offer(val) }
  public func receive() throws -> Element { try awaitReceive() }
  public func receive_nonblock() -> Element? { poll() }
}

// MARK: co_sequence → scheduler.generator; yield { } → ScheduledGenerator.Yield.current

public enum COError: Error {
  case notGenerator, generatorClosed
}

public final class Generator<T> {
  let generator: ScheduledGenerator<T>
  init(_ generator: ScheduledGenerator<T>) { self.generator = generator }
  public func next() throws -> T {
    guard let element = try generator.nextElement() else { throw COError.generatorClosed }
    return element
  }
  public func cancel() { generator.cancel() }
  public func join() { try? generator.join() }
}

public func co_sequence<T>(
  _ type: T.Type, queue: DispatchQueue? = nil, block: @escaping () throws -> Void
) -> Generator<T> {
  Generator(scheduler(queue).generator { (_: ScheduledGenerator<T>.Yield) in try block() })
}

public func yield<T>(closure: @escaping () throws -> T) throws {
  guard let yield = ScheduledGenerator<T>.Yield.current else { throw COError.notGenerator }
  try yield(try closure())  // an autoclosure: evaluated when a consumer asks, as coswift's
}

public func yield<T>(closure: @escaping () -> CoFuture<T>) throws {
  guard let yield = ScheduledGenerator<T>.Yield.current else { throw COError.notGenerator }
  try yield(closure())  // awaited, its value handed over
}
