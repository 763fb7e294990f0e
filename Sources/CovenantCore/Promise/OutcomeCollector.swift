import Dispatch

/// Gathers one element per source promise for `all` and `any`, whichever thread reports it,
/// and hands the complete list, in source order, to whoever reports last.
///
/// `@unchecked Sendable`: the elements (promise values, which cross threads by design as
/// promise blocks are dispatched) are only touched inside the mutex.
final class OutcomeCollector<Element>: @unchecked Sendable {
  private struct Slots: @unchecked Sendable {
    var elements: [Element?]
    var missing: Int
  }

  private let slots: InlineMutex<Slots>

  init(count: Int) {
    slots = InlineMutex(Slots(elements: Array(repeating: nil, count: count), missing: count))
  }

  /// Stores `element` for source `index` (each index is reported once); returns every element
  /// when this was the last one missing, else `nil`.
  func record(_ element: Element, at index: Int) -> [Element]? {
    let element = UncheckedSendable(element)
    let all = slots.withCriticalSection { slots -> UncheckedSendable<[Element]>? in
      slots.elements[index] = element.value
      slots.missing -= 1
      guard slots.missing == 0 else { return nil }
      return UncheckedSendable(slots.elements.map { $0! })
    }
    return all?.value
  }
}

/// Observes each source on `queue` and reports its outcome; `observe(index, report)` registers
/// the report for source `index`.
typealias SourceObservation<Element> = (
  _ index: Int, _ report: @escaping (Result<Element, any Error>) -> Void
) -> Void

extension Promise {
  /// Reports this promise's outcome, type-erased, on `queue` (for the tuple forms).
  func observeErased(on queue: DispatchQueue, _ report: @escaping (Result<Any, any Error>) -> Void)
  {
    observe(on: queue) { outcome in report(outcome.map { $0 }) }
  }
}
