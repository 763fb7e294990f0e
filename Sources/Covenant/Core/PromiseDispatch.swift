import Dispatch

/// The single place where promise blocks are handed to dispatch queues.
///
/// Every observer and work block goes through `DispatchGroup.promises`, so
/// `waitForPromises(timeout:)` sees it.
enum PromiseDispatch {
  static func async(on queue: DispatchQueue, _ block: @escaping () -> Void) {
    let work = UncheckedSendable(block)
    queue.async(group: .promises) { work.value() }
  }
}

/// Carries a value across a `@Sendable` boundary whose thread-safety the caller guarantees.
///
/// Promise values and blocks cross threads by design (they are dispatched to the queue the
/// caller chose); this is the one place that says so.
struct UncheckedSendable<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}
