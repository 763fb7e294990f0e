/// The values a `NIOCoroutineChannel` has received and its reader has not taken yet, first in
/// first out.
///
/// Built for the common case of zero or one buffered value (a request that fits one read):
/// that one lives inline, and an array is allocated only while more are buffered at once, and
/// dropped as soon as they are taken — an idle connection holds no storage.
struct InboundQueue<Element> {
  private var head: Element?
  private var rest: [Element] = []
  private var restStart = 0

  var isEmpty: Bool { head == nil }

  /// How many values are buffered.
  var count: Int { head == nil ? 0 : 1 + rest.count - restStart }

  /// The first value, if any (borrowed: mutate it through `modifyFirst`).
  var first: Element? { head }

  /// The second value, if any.
  var second: Element? { restStart < rest.count ? rest[restStart] : nil }

  mutating func append(_ value: Element) {
    if head == nil {
      head = value
    } else {
      rest.append(value)
    }
  }

  /// Takes the first value.
  mutating func popFirst() -> Element? {
    guard let value = head.take() else { return nil }
    if restStart < rest.count {
      head = rest[restStart]
      restStart += 1
      if restStart == rest.count {
        rest = []
        restStart = 0
      }
    }
    return value
  }

  /// Runs `body` on the first value in place (no copy of its storage: a `ByteBuffer` stays
  /// uniquely referenced, so reading from it does not copy its bytes).
  /// - Precondition: the queue is not empty.
  @discardableResult
  mutating func modifyFirst<R>(_ body: (inout Element) throws -> R) rethrows -> R {
    precondition(head != nil, "InboundQueue.modifyFirst on an empty queue")
    return try body(&head!)
  }

  /// Runs `body` on the second value in place.
  /// - Precondition: the queue holds at least two values.
  mutating func modifySecond<R>(_ body: (inout Element) throws -> R) rethrows -> R {
    precondition(restStart < rest.count, "InboundQueue.modifySecond without a second value")
    return try body(&rest[restStart])
  }

  /// Removes the second value and returns it (to be merged into the first).
  mutating func removeSecond() -> Element? {
    guard restStart < rest.count else { return nil }
    let value = rest[restStart]
    restStart += 1
    if restStart == rest.count {
      rest = []
      restStart = 0
    }
    return value
  }

  /// Drops every value.
  mutating func removeAll() {
    head = nil
    rest = []
    restStart = 0
  }
}
