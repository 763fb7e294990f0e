import Covenant
import CovenantModel

/// A random stream program for `StreamModelTests`: input elements at virtual times, a chain of
/// operators, and a way to consume; and the reference outcome, computed over arrays.
///
/// Times are nanoseconds of a `TestScheduler`'s clock. Inputs arrive at multiples of 10 ms and
/// the time operators' intervals have an odd nanosecond, so that no timer ever fires at the
/// instant an element arrives: the reference need not guess an order the scheduler does not
/// promise. At most one time operator per chain, for the same reason.
struct StreamProgram: CustomStringConvertible {
  /// One element of a trace: its value and when it reached the consumer.
  struct Event: Equatable, CustomStringConvertible {
    let value: Int
    let time: UInt64
    var description: String { "\(value)@\(time / 1_000_000)ms+\(time % 1_000_000)ns" }
  }

  /// Everything a consumer saw: the elements, and the end with its time.
  struct Trace: Equatable, CustomStringConvertible {
    var events: [Event]
    var end: CoChannelError
    var endTime: UInt64
    var description: String {
      "\(events.map(\.description)) then \(end) at \(endTime / 1_000_000)ms+\(endTime % 1_000_000)ns"
    }
  }

  enum Operator: CustomStringConvertible {
    case map(Int)  // x * k + 1
    case filterModulo(Int)  // x % k != 0
    case compactMap  // nil for multiples of 4, else x / 2
    case removeDuplicates
    case reductions
    case prefix(Int)
    case dropWhileBelow(Int)
    case chunkedSum(Int)
    case buffer(Int)
    case mergeWithEmpty
    case zipWithCounter
    case flatMapTwice  // flatMapMerge(maxConcurrent: 1) { [x, x + 100] }
    case timeout(UInt64)
    case debounce(UInt64)
    case throttle(UInt64, latest: Bool)
    case chunkedWithin(Int, UInt64)

    var isTimed: Bool {
      switch self {
      case .timeout, .debounce, .throttle, .chunkedWithin: return true
      default: return false
      }
    }

    var description: String {
      switch self {
      case .map(let k): return "map(x*\(k)+1)"
      case .filterModulo(let k): return "filter(x%\(k)!=0)"
      case .compactMap: return "compactMap"
      case .removeDuplicates: return "removeDuplicates"
      case .reductions: return "reductions(0,+)"
      case .prefix(let n): return "prefix(\(n))"
      case .dropWhileBelow(let k): return "drop(while:<\(k))"
      case .chunkedSum(let k): return "chunked(\(k)).sum"
      case .buffer(let k): return "buffer(\(k))"
      case .mergeWithEmpty: return "merge(empty)"
      case .zipWithCounter: return "zip(counter).0"
      case .flatMapTwice: return "flatMapMerge(1){x,x+100}"
      case .timeout(let d): return "timeout(\(d)ns)"
      case .debounce(let d): return "debounce(\(d)ns)"
      case .throttle(let d, let latest): return "throttle(\(d)ns,latest:\(latest))"
      case .chunkedWithin(let k, let d): return "chunked(\(k),within:\(d)ns).sum"
      }
    }
  }

  enum Consumer: String { case awaitReceive, select, values }

  let input: [Event]
  let closeTime: UInt64
  let chain: [Operator]
  let consumer: Consumer

  var description: String {
    "input \(input) closed at \(closeTime / 1_000_000)ms; chain \(chain); consumer \(consumer)"
  }

  var isTimed: Bool { chain.contains { $0.isTimed } }

  init(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    var time: UInt64 = 0
    var input: [Event] = []
    for _ in 0..<random.int(0...24) {
      time += UInt64(random.int(0...4)) * 10_000_000
      input.append(Event(value: random.int(0...9), time: time))
    }
    self.input = input
    closeTime = time + UInt64(random.int(0...6)) * 10_000_000
    let interval = { (random: inout SplitMix64) -> UInt64 in
      UInt64(random.int(1...5)) * 5_000_000 + 10_000_000 + 1
    }
    var chain: [Operator] = []
    var timed = false
    for _ in 0..<random.int(1...4) {
      if !timed, random.chance(30) {
        timed = true
        switch random.int(0...3) {
        case 0: chain.append(.timeout(interval(&random) + 20_000_000))
        case 1: chain.append(.debounce(interval(&random)))
        case 2: chain.append(.throttle(interval(&random), latest: random.chance(50)))
        default: chain.append(.chunkedWithin(random.int(1...4), interval(&random)))
        }
        continue
      }
      switch random.int(0...11) {
      case 0: chain.append(.map(random.int(1...3)))
      case 1: chain.append(.filterModulo(random.int(2...3)))
      case 2: chain.append(.compactMap)
      case 3: chain.append(.removeDuplicates)
      case 4: chain.append(.reductions)
      case 5: chain.append(.prefix(random.int(0...8)))
      case 6: chain.append(.dropWhileBelow(random.int(1...6)))
      case 7: chain.append(.chunkedSum(random.int(1...3)))
      case 8: chain.append(.buffer(random.int(0...3)))
      case 9: chain.append(.mergeWithEmpty)
      case 10: chain.append(.zipWithCounter)
      default: chain.append(.flatMapTwice)
      }
    }
    self.chain = chain
    consumer = random.pick([.awaitReceive, .select, .values])
  }

  // MARK: The chain, on receivers

  @available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
  static func apply(_ op: Operator, to receiver: CoChannel<Int>.Receiver)
    -> CoChannel<Int>.Receiver
  {
    switch op {
    case .map(let k): return receiver.map { $0 * k + 1 }
    case .filterModulo(let k): return receiver.filter { $0 % k != 0 }
    case .compactMap: return receiver.compactMap { $0 % 4 == 0 ? nil : $0 / 2 }
    case .removeDuplicates: return receiver.removeDuplicates()
    case .reductions: return receiver.reductions(0, +)
    case .prefix(let n): return receiver.prefix(n)
    case .dropWhileBelow(let k): return receiver.drop { $0 < k }
    case .chunkedSum(let k): return receiver.chunked(byCount: k).map { $0.reduce(0, +) }
    case .buffer(let k): return receiver.buffer(capacity: k)
    case .mergeWithEmpty:
      let empty = CoChannel<Int>()
      empty.close()
      return CoChannel.merge(receiver, empty.receiver)
    case .zipWithCounter:
      return CoChannel.zip(receiver, CoChannel<Int>(consumingCountFrom: 0).receiver).map { $0.0 }
    case .flatMapTwice:
      return receiver.flatMapMerge(maxConcurrent: 1) { value in
        let inner = CoChannel<Int>()
        inner.offer(value)
        inner.offer(value + 100)
        inner.close()
        return inner.receiver
      }
    case .timeout(let d): return receiver.timeout(.nanoseconds(Int64(d)))
    case .debounce(let d): return receiver.debounce(for: .nanoseconds(Int64(d)))
    case .throttle(let d, let latest):
      return receiver.throttle(for: .nanoseconds(Int64(d)), latest: latest)
    case .chunkedWithin(let k, let d):
      return receiver.chunked(byCount: k, orWithin: .nanoseconds(Int64(d))).map {
        $0.reduce(0, +)
      }
    }
  }

  // MARK: The reference, over arrays

  /// What the chain should give a consumer that is always ready.
  var expected: Trace {
    var trace = Trace(events: input, end: .closed, endTime: closeTime)
    for op in chain { trace = Self.reference(op, trace) }
    return trace
  }

  static func reference(_ op: Operator, _ trace: Trace) -> Trace {
    var out = Trace(events: [], end: trace.end, endTime: trace.endTime)
    func emit(_ value: Int, _ time: UInt64) { out.events.append(Event(value: value, time: time)) }
    switch op {
    case .map(let k):
      for e in trace.events { emit(e.value * k + 1, e.time) }
    case .filterModulo(let k):
      for e in trace.events where e.value % k != 0 { emit(e.value, e.time) }
    case .compactMap:
      for e in trace.events where e.value % 4 != 0 { emit(e.value / 2, e.time) }
    case .removeDuplicates:
      var last: Int?
      for e in trace.events where e.value != last {
        last = e.value
        emit(e.value, e.time)
      }
    case .reductions:
      var total = 0
      for e in trace.events {
        total += e.value
        emit(total, e.time)
      }
    case .prefix(let n):
      for e in trace.events.prefix(n) { emit(e.value, e.time) }
      if n == 0 {
        out.end = .closed
        out.endTime = 0
      } else if trace.events.count >= n {
        out.end = .closed
        out.endTime = trace.events[n - 1].time
      }
    case .dropWhileBelow(let k):
      var dropping = true
      for e in trace.events {
        if dropping, e.value < k { continue }
        dropping = false
        emit(e.value, e.time)
      }
    case .chunkedSum(let k):
      var chunk: [Int] = []
      for e in trace.events {
        chunk.append(e.value)
        if chunk.count == k {
          emit(chunk.reduce(0, +), e.time)
          chunk = []
        }
      }
      if !chunk.isEmpty, trace.end != .canceled { emit(chunk.reduce(0, +), trace.endTime) }
    case .buffer, .mergeWithEmpty, .zipWithCounter:
      out.events = trace.events
    case .flatMapTwice:
      for e in trace.events {
        emit(e.value, e.time)
        emit(e.value + 100, e.time)
      }
    case .timeout(let d):
      var previous: UInt64 = 0
      for e in trace.events {
        if e.time > previous + d {
          out.end = .timeout
          out.endTime = previous + d
          return out
        }
        emit(e.value, e.time)
        previous = e.time
      }
      if trace.endTime > previous + d {
        out.end = .timeout
        out.endTime = previous + d
      }
    case .debounce(let d):
      var waiting: Event?
      for e in trace.events {
        if let w = waiting, e.time > w.time + d { emit(w.value, w.time + d) }
        waiting = e
      }
      if let w = waiting {
        if trace.endTime > w.time + d {
          emit(w.value, w.time + d)
        } else if trace.end == .closed {
          emit(w.value, trace.endTime)
        }
      }
    case .throttle(let d, let latest):
      var windowEnd: UInt64?  // nil: idle
      var kept: Int?
      /// The ends of the intervals before `time`.
      func tick(before time: UInt64) {
        while let end = windowEnd, end < time {
          if let value = kept {
            emit(value, end)
            kept = nil
            windowEnd = end + d
          } else {
            windowEnd = nil
          }
        }
      }
      for e in trace.events {
        tick(before: e.time)
        if windowEnd == nil {
          emit(e.value, e.time)
          windowEnd = e.time + d
        } else if latest || kept == nil {
          kept = e.value
        }
      }
      tick(before: trace.endTime)
      if let value = kept, trace.end == .closed { emit(value, trace.endTime) }
    case .chunkedWithin(let k, let d):
      var chunk: [Int] = []
      var deadline: UInt64 = 0
      for e in trace.events {
        if !chunk.isEmpty, e.time > deadline {
          emit(chunk.reduce(0, +), deadline)
          chunk = []
        }
        if chunk.isEmpty { deadline = e.time + d }
        chunk.append(e.value)
        if chunk.count == k {
          emit(chunk.reduce(0, +), e.time)
          chunk = []
        }
      }
      if !chunk.isEmpty {
        emit(chunk.reduce(0, +), trace.endTime > deadline ? deadline : trace.endTime)
      }
    }
    return out
  }
}
