import Covenant
import Dispatch
import Foundation

/// A random channel program (the FuturesChannelsAndSelect article): senders and receivers,
/// each a coroutine on a random scheduler, using random operations (awaitSend / offer / select
/// to send; awaitReceive / poll / select / receiveFuture to receive), ending with a close after the last send, an
/// early close, or a cancel in mid-stream.
public struct ChannelProgram: Sendable, CustomStringConvertible {
  /// How one element is sent.
  public enum SendStyle: Sendable, CaseIterable { case awaitSend, offer, select }
  /// How one element is received.
  public enum ReceiveStyle: Sendable, CaseIterable {
    case awaitReceive, pollOrAwait, select, future
  }
  /// How the run ends.
  public enum Ending: Sendable, Equatable {
    /// The last sender to finish closes the channel.
    case closeAfterSends
    /// Whoever makes the N-th successful send closes the channel (later sends fail).
    case closeAfter(Int)
    /// Whoever makes the N-th successful send cancels the channel.
    case cancelAfter(Int)
  }

  /// The seed that generated this program.
  public let seed: UInt64
  /// The channel's buffer.
  public let bufferType: CoChannel<Int>.BufferType
  /// Per sender, the style of each of its sends (its element count is the array's length).
  public let senders: [[SendStyle]]
  /// Per receiver, the style it uses for every receive.
  public let receivers: [ReceiveStyle]
  /// Scheduler index per coroutine (senders first, then receivers).
  public let schedulers: [Int]
  /// How the run ends.
  public let ending: Ending

  /// Builds the program of `seed`: up to `maxSenders` senders of up to `maxElements` elements
  /// each (at most 1,000), and up to `maxReceivers` receivers.
  public init(seed: UInt64, maxSenders: Int = 3, maxElements: Int = 40, maxReceivers: Int = 3) {
    self.seed = seed
    var random = SplitMix64(seed: seed)
    bufferType = random.pick([
      .none, .buffered(capacity: random.int(1...4)), .unlimited, .conflated,
    ])
    senders = (0..<random.int(1...maxSenders)).map { _ in
      (0..<random.int(0...min(maxElements, 1_000))).map { _ in random.pick(SendStyle.allCases) }
    }
    receivers = (0..<random.int(1...maxReceivers)).map { _ in random.pick(ReceiveStyle.allCases) }
    schedulers = (0..<(senders.count + receivers.count)).map { _ in
      random.int(0...(ModelSchedulers.schedulers.count - 1))
    }
    let total = senders.reduce(0) { $0 + $1.count }
    switch random.int(0...9) {
    case 0...5: ending = .closeAfterSends
    case 6, 7: ending = .closeAfter(random.int(0...max(0, total)))
    default: ending = .cancelAfter(random.int(0...max(0, total)))
    }
  }

  public var description: String {
    "\(bufferType), senders \(senders.map { $0.count }) \(senders.map { Set($0) }), "
      + "receivers \(receivers), schedulers \(schedulers), \(ending)"
  }

  /// The element the `index`-th send of sender `sender` carries.
  static func element(sender: Int, index: Int) -> Int { sender * 1_000 + index }
}

/// Runs a `ChannelProgram` and checks the §5 invariants.
public enum ChannelProgramRunner {
  /// Runs `program`; returns the operations done and the violated invariants (empty if none):
  /// no element received twice; none received whose send failed; each receiver sees each
  /// sender's elements in order (FIFO per sender); without a cancel (and a conflated buffer,
  /// which may overwrite) every element sent is received; receivers end with `.closed`, or
  /// `.canceled` after a cancel; `whenComplete` runs once, `whenCanceled` once after a cancel
  /// and never otherwise; nothing hangs; the channel is deallocated once dropped.
  public static func run(_ program: ChannelProgram, timeout: TimeInterval = 20) -> (
    operations: Int, failures: [String]
  ) {
    var failures: [String] = []
    var channel: CoChannel<Int>? = CoChannel<Int>(bufferType: program.bufferType)
    let log = ChannelLog(receivers: program.receivers.count, senders: program.senders.count)
    let idle = CoChannel<Int>(bufferType: .none)  // a select case that never becomes ready
    let group = DispatchGroup()
    channel!.whenComplete { log.count(\.completions) }
    channel!.whenCanceled { log.count(\.cancellations) }
    for (sender, styles) in program.senders.enumerated() {
      let channel = channel!
      group.enter()
      ModelSchedulers.schedulers[program.schedulers[sender]].startCoroutine {
        defer { group.leave() }
        for (index, style) in styles.enumerated() {
          let element = ChannelProgram.element(sender: sender, index: index)
          let sent: Bool
          do {
            switch style {
            case .awaitSend:
              try channel.awaitSend(element)
              sent = true
            case .offer: sent = channel.offer(element)
            case .select:
              try CoChannel.select { select in
                select.onSend(channel, element)
                select.onReceive(idle) { _ in }
              }
              sent = true
            }
          } catch {
            sent = false
          }
          log.sendDone(element, sent)
          if sent { endIfDue(program.ending, log.successfulSends(), channel, log) }
          if !sent && style != .offer { break }  // an awaited send fails only once ended
        }
        if log.senderFinished() { _ = channel.close() }
      }
    }
    for (receiver, style) in program.receivers.enumerated() {
      let channel = channel!
      group.enter()
      ModelSchedulers.schedulers[program.schedulers[program.senders.count + receiver]]
        .startCoroutine {
          defer { group.leave() }
          do {
            while true {
              let element: Int
              switch style {
              case .awaitReceive: element = try channel.awaitReceive()
              case .pollOrAwait: element = try channel.poll() ?? channel.awaitReceive()
              case .select:
                element = try CoChannel.select { select in
                  select.onReceive(idle) { $0 }
                  select.onReceive(channel) { $0 }
                }
              case .future: element = try channel.receiveFuture().await()
              }
              log.received(element, by: receiver)
            }
          } catch {
            log.ended(receiver, ModelOutcome.code(of: error))
          }
        }
    }
    if program.senders.isEmpty { _ = channel!.close() }
    if group.wait(timeout: .now() + timeout) == .timedOut {
      return (0, ["hang: coroutines still running after \(Int(timeout)) s; \(log.summary)"])
    }
    failures += log.check(program, channel!)
    let weak = WeakBox(channel!)
    channel = nil
    if !eventually(timeout: timeout, { weak.object == nil }) {
      failures.append("leak: the channel is still alive after being dropped")
    }
    return (log.operations, failures)
  }

  private static func endIfDue(
    _ ending: ChannelProgram.Ending, _ sends: Int, _ channel: CoChannel<Int>, _ log: ChannelLog
  ) {
    switch ending {
    case .closeAfterSends: break
    case .closeAfter(let count): if sends == count { _ = channel.close() }
    case .cancelAfter(let count):
      if sends == count {
        log.count(\.cancelCalls)
        channel.cancel()
      }
    }
  }
}

/// What a channel program observed (thread-safe).
final class ChannelLog: @unchecked Sendable {
  private let lock = NSLock()
  private var sendResults: [Int: Bool] = [:]
  private var receivedBy: [[Int]]
  private var endings: [Int?]
  private var sendersLeft: Int
  private var sends = 0
  var completions = 0
  var cancellations = 0
  var cancelCalls = 0

  init(receivers: Int, senders: Int) {
    receivedBy = Array(repeating: [], count: receivers)
    endings = Array(repeating: nil, count: receivers)
    sendersLeft = senders
  }

  var operations: Int {
    lock.withLock { sendResults.count + receivedBy.reduce(0) { $0 + $1.count } }
  }
  var summary: String {
    lock.withLock { "sent \(sends), received \(receivedBy.map(\.count)), endings \(endings)" }
  }

  func count(_ counter: ReferenceWritableKeyPath<ChannelLog, Int>) {
    lock.withLock { self[keyPath: counter] += 1 }
  }
  func sendDone(_ element: Int, _ sent: Bool) {
    lock.withLock {
      sendResults[element] = sent
      if sent { sends += 1 }
    }
  }
  func successfulSends() -> Int { lock.withLock { sends } }
  func senderFinished() -> Bool {
    lock.withLock {
      sendersLeft -= 1
      return sendersLeft == 0
    }
  }
  func received(_ element: Int, by receiver: Int) {
    lock.withLock { receivedBy[receiver].append(element) }
  }
  func ended(_ receiver: Int, _ code: Int) { lock.withLock { endings[receiver] = code } }

  func check(_ program: ChannelProgram, _ channel: CoChannel<Int>) -> [String] {
    lock.withLock {
      var failures: [String] = []
      let canceled = cancelCalls > 0
      var seen = Set<Int>()
      for (receiver, elements) in receivedBy.enumerated() {
        var last: [Int: Int] = [:]
        for element in elements {
          if !seen.insert(element).inserted { failures.append("element \(element) received twice") }
          switch sendResults[element] {
          case true?: break
          case false?: failures.append("element \(element) received although its send failed")
          case nil: failures.append("element \(element) received but never sent")
          }
          let sender = element / 1_000
          if let previous = last[sender], previous >= element {
            failures.append("receiver \(receiver): \(element) after \(previous) (FIFO per sender)")
          }
          last[sender] = element
        }
        let expected = canceled ? 9008 : 9007
        if endings[receiver] != expected {
          failures.append(
            "receiver \(receiver) ended with \(String(describing: endings[receiver])), expected \(expected)"
          )
        }
      }
      let sent = Set(sendResults.filter(\.value).keys)
      let lost = sent.subtracting(seen)
      if !canceled && program.bufferType != .conflated && !lost.isEmpty {
        failures.append("elements sent but never received: \(lost.sorted().prefix(10))")
      }
      if !channel.isEmpty { failures.append("channel not empty at the end (\(channel.count))") }
      if completions != 1 { failures.append("whenComplete ran \(completions) times") }
      if cancellations != (canceled ? 1 : 0) {
        failures.append("whenCanceled ran \(cancellations) times")
      }
      return failures
    }
  }
}
