import Covenant
import CovenantTesting

/// Every operator of the Streams article, as a stage from a receiver of `Int` to a receiver of
/// `Int` (stages with other outputs are mapped back), for the tests that check what all of them
/// share: ends, cancellation, `select`, bridges.
struct StreamStageCase: Sendable {
  let name: String
  /// Whether elements pass through unchanged, in order, none dropped (given distinct inputs
  /// arriving at one virtual instant and a consumer that keeps up).
  let passesElementsThrough: Bool
  let make: @Sendable (CoChannel<Int>.Receiver) -> CoChannel<Int>.Receiver
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
let streamStageCases: [StreamStageCase] = [
  StreamStageCase(name: "map", passesElementsThrough: true) { $0.map { $0 } },
  StreamStageCase(name: "compactMap", passesElementsThrough: true) { $0.compactMap { $0 } },
  StreamStageCase(name: "filter", passesElementsThrough: true) { $0.filter { _ in true } },
  StreamStageCase(name: "removeDuplicates", passesElementsThrough: true) {
    $0.removeDuplicates()
  },
  StreamStageCase(name: "removeDuplicates(by:)", passesElementsThrough: true) {
    $0.removeDuplicates { $0 == $1 }
  },
  StreamStageCase(name: "reductions", passesElementsThrough: false) { $0.reductions(0, +) },
  StreamStageCase(name: "prefix", passesElementsThrough: true) { $0.prefix(1_000) },
  StreamStageCase(name: "drop(while:)", passesElementsThrough: true) { $0.drop { _ in false } },
  StreamStageCase(name: "chunked(byCount:)", passesElementsThrough: false) {
    $0.chunked(byCount: 2).map { $0.reduce(0, +) }
  },
  StreamStageCase(name: "buffer(.suspend)", passesElementsThrough: true) {
    $0.buffer(capacity: 4, policy: .suspend)
  },
  StreamStageCase(name: "buffer(.dropOldest)", passesElementsThrough: false) {
    $0.buffer(capacity: 4, policy: .dropOldest)
  },
  StreamStageCase(name: "buffer(.dropNewest)", passesElementsThrough: false) {
    $0.buffer(capacity: 4, policy: .dropNewest)
  },
  StreamStageCase(name: "conflated", passesElementsThrough: false) { $0.conflated() },
  StreamStageCase(name: "flatMapMerge", passesElementsThrough: false) {
    $0.flatMapMerge(maxConcurrent: 2) { filledChannel([$0]).receiver }
  },
  StreamStageCase(name: "flatMapLatest", passesElementsThrough: false) {
    $0.flatMapLatest { filledChannel([$0]).receiver }
  },
  StreamStageCase(name: "timeout", passesElementsThrough: true) {
    $0.timeout(.seconds(1_000))
  },
  StreamStageCase(name: "debounce", passesElementsThrough: false) {
    $0.debounce(for: .milliseconds(5))
  },
  StreamStageCase(name: "throttle", passesElementsThrough: false) {
    $0.throttle(for: .milliseconds(5))
  },
  StreamStageCase(name: "chunked(byCount:orWithin:)", passesElementsThrough: false) {
    $0.chunked(byCount: 3, orWithin: .milliseconds(5)).map { $0.reduce(0, +) }
  },
  StreamStageCase(name: "merge", passesElementsThrough: true) {
    CoChannel.merge($0, filledChannel([Int]()).receiver)
  },
  StreamStageCase(name: "zip", passesElementsThrough: true) {
    CoChannel.zip($0, CoChannel<Int>(consumingCountFrom: 0).receiver).map { $0.0 }
  },
  StreamStageCase(name: "combineLatest", passesElementsThrough: false) {
    CoChannel.combineLatest($0, filledChannel([0]).receiver).map { $0.0 }
  },
]

extension CoChannel where Element == Int {
  /// An endless channel of 0, 1, 2, … fed on demand (a rendezvous channel with a sender
  /// coroutine on the immediate scheduler), for `zip`'s other side.
  convenience init(consumingCountFrom start: Int) {
    self.init(bufferType: .none)
    Coroutine.start { [weak self] in
      var next = start
      while let channel = self {
        try channel.awaitSend(next)
        next += 1
      }
    }
  }
}
