import Dispatch

extension Promise {
  /// Folds `items` into this promise's value, one after the other: `reducer` runs on `queue`
  /// with the value so far and the next item, and returns a promise of the next value. The
  /// first rejection (or throw) ends the fold and rejects. With no items, returns `self`.
  ///
  /// Unlike google/promises, which ignores it, `queue` is where `reducer` runs.
  ///
  /// ```swift
  /// Promise("").reduce(1, 2, 3) { text, number in Promise(text + String(number)) }  // "123"
  /// ```
  @discardableResult
  public func reduce<Element>(
    on queue: DispatchQueue = .promises,
    _ items: Element...,
    combine reducer: @escaping @Sendable (Value, Element) throws -> Promise<Value>
  ) -> Promise<Value> {
    reduce(on: queue, items, reducer)
  }

  /// Folds the elements of `items` into this promise's value, one after the other: `reducer`
  /// runs on `queue` with the value so far and the next element, and returns a promise of the
  /// next value. The first rejection (or throw) ends the fold and rejects. With no elements,
  /// returns `self`.
  ///
  /// Unlike google/promises, which ignores it, `queue` is where `reducer` runs.
  ///
  /// ```swift
  /// Promise(0).reduce(urls) { total, url in download(url).then { total + $0.count } }
  /// ```
  @discardableResult
  public func reduce<Items: Sequence>(
    on queue: DispatchQueue = .promises,
    _ items: Items,
    _ reducer: @escaping @Sendable (Value, Items.Element) throws -> Promise<Value>
  ) -> Promise<Value> {
    var folded = self
    for item in items {
      folded = folded.chain(on: queue) { outcome in .adopt(try reducer(try outcome.get(), item)) }
    }
    return folded
  }
}
