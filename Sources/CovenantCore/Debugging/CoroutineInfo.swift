import Dispatch

/// One coroutine (or generator) as a ``CoroutineSnapshot`` saw it: what it is, what it waits
/// for and since when, where it was started, where it runs, its stack and, while it is switched
/// out, its frames.
///
/// ```swift
/// for coroutine in CoroutineSnapshot.take().coroutines where coroutine.state == .suspended {
///   print(coroutine.id, coroutine.wait.map(String.init(describing:)) ?? "-", coroutine.startSite)
/// }
/// ```
public struct CoroutineInfo: Sendable, Identifiable, CustomStringConvertible {
  /// A serial number, unique in the process: coroutines and generators are numbered in the
  /// order they were started.
  public let id: UInt64
  /// The name given at start (`startCoroutine(name:…)`), if any.
  public let name: String?
  /// Whether this is a coroutine or a generator.
  public let kind: Kind
  /// What it is doing.
  public let state: State
  /// What it waits for: set while it is ``State/suspended``, and while it is ``State/ready``
  /// for a reason of its own (a yield, a hop, a busy shared stack).
  public let wait: Wait?
  /// Whether the wait also ends at a timeout (`await(timeout:)`, a timed `select`, …).
  public let waitHasTimeout: Bool
  /// The length of that timeout, in seconds, while the coroutine is switched out in a timed
  /// wait (`nil` for other waits, and for a timeout of `.never`).
  public let timeoutSeconds: Double?
  /// How long it has been suspended or ready, in seconds (`nil` while it runs, before its first
  /// run, and for generators).
  public let waitingSeconds: Double?
  /// Whether nothing can ever resume it: it waits for a callback that was released without
  /// being called (the callback of `Coroutine.await { callback in … }`, which would otherwise
  /// hang it forever). Cancelling the coroutine still ends such a wait.
  public let isLeaked: Bool
  /// The scheduler it runs on: `queue "label"` for a dispatch queue, a description of other
  /// schedulers, `immediate` for coroutines that continue on the thread that resumes them
  /// (`Coroutine.start`, `CoFuture(task:)`); `nil` for generators.
  public let scheduler: String?
  /// The file (`#fileID`) where it was started; `nil` where the start could not record it (a
  /// start function called as a function value).
  public let startFile: String?
  /// The line where it was started (0 if unknown).
  public let startLine: Int
  /// The scope it was started in (`startCoroutine(in:)`), if that scope still exists.
  public let scope: ObjectIdentifier?
  /// Its stack, once it has one (`nil` before its first run).
  public let stack: Stack?
  /// Its frames, innermost first, while it is suspended or ready (empty otherwise, or when the
  /// snapshot was taken without backtraces).
  public let backtrace: [Frame]

  /// How much of the timed wait's timeout is left, in seconds, as of the snapshot: the
  /// timeout less the time spent waiting so far (``waitingSeconds``, counted from when the
  /// coroutine switched out, which is when its timer started); negative once the timeout has
  /// passed and the coroutine has not been woken yet. `nil` unless ``timeoutSeconds`` is known.
  /// It is real time: on a scheduler whose clock is virtual (CovenantTesting's
  /// `TestScheduler`), the timeout runs on that clock instead, and this says only how much real
  /// time has passed.
  public var timeoutRemainingSeconds: Double? {
    guard let timeoutSeconds, let waitingSeconds else { return nil }
    return timeoutSeconds - waitingSeconds
  }

  /// `file:line`, or `unknown` when the start did not record it.
  public var startSite: String {
    guard let startFile else { return "unknown" }
    return "\(startFile):\(startLine)"
  }

  /// A one-line summary: id, name, state and wait, start site.
  public var description: String {
    var text = "\(kind == .generator ? "generator" : "coroutine") \(id)"
    if let name { text += " \"\(name)\"" }
    text += " [\(statusText)]"
    return text + " started at \(startSite)"
  }

  /// The bracketed part of a dump's heading: state or wait, timeout, time in that state.
  var statusText: String {
    var parts: [String] = []
    if let wait, state == .suspended || state == .ready {
      var text = state == .ready ? "ready: \(wait)" : "\(wait)"
      if let timeoutSeconds, let remaining = timeoutRemainingSeconds {
        let timeout = CoroutineInfo.preciseDuration(timeoutSeconds)
        text +=
          remaining >= 0
          ? ", \(CoroutineInfo.preciseDuration(remaining)) left of a \(timeout) timeout"
          : ", \(timeout) timeout overdue by \(CoroutineInfo.duration(-remaining))"
      } else if waitHasTimeout {
        text += ", with a timeout"
      }
      parts.append(text)
    } else {
      parts.append(state.description)
    }
    if isLeaked { parts.append("leaked: nothing can resume it") }
    if let waitingSeconds { parts.append(CoroutineInfo.duration(waitingSeconds)) }
    return parts.joined(separator: ", ")
  }

  /// A duration as Go prints a goroutine's wait: whole minutes from one minute, else seconds
  /// or milliseconds.
  static func duration(_ seconds: Double) -> String {
    if seconds >= 60 { return "\(Int(seconds / 60)) min" }
    if seconds >= 1 { return "\(Int(seconds)) s" }
    return "\(Int(seconds * 1000)) ms"
  }

  /// Whether a ``CoroutineInfo`` is a coroutine or a generator.
  public enum Kind: Sendable, Hashable {
    /// Started with `startCoroutine`, `coroutineFuture`, `Coroutine.start`, `CoFuture(task:)`
    /// or an actor.
    case coroutine
    /// A `Generator` whose body has started and not ended.
    case generator
  }

  /// What a coroutine is doing.
  public enum State: Sendable, Hashable, CustomStringConvertible {
    /// Started, waiting for its first turn on its scheduler (it has no stack yet).
    case notStarted
    /// Running on some thread right now (a generator: inside its consumer's `next()`).
    case running
    /// Switched out, waiting for ``CoroutineInfo/wait``.
    case suspended
    /// Switched out and due to run: woken, yielded, moving to another scheduler, or waiting for
    /// its shared stack, which another coroutine is running on.
    case ready

    /// `not started`, `running`, `suspended` or `ready`.
    public var description: String {
      switch self {
      case .notStarted: "not started"
      case .running: "running"
      case .suspended: "suspended"
      case .ready: "ready"
      }
    }
  }

  /// What a coroutine waits for.
  public enum Wait: Sendable, Equatable, CustomStringConvertible {
    /// `await()` of a promise or future; `type` is its type, e.g. `Promise<Int>`.
    case future(type: String)
    /// A receive from a channel (`awaitReceive`, iteration); `channel` is e.g. `CoChannel<Int>`.
    case channelReceive(channel: String)
    /// A send to a full channel; `channel` as above.
    case channelSend(channel: String)
    /// `select` over several channel cases.
    case select
    /// `Coroutine.delay`, until `deadline`.
    case delay(deadline: DispatchTime)
    /// `Coroutine.await { callback in … }` (or a SwiftCoroutine-style callback await);
    /// `valueType` is what the callback delivers.
    case callback(valueType: String)
    /// `Coroutine.awaitAsync { … }`: an async operation; `resultType` is its result's type.
    case asyncOperation(resultType: String)
    /// `CoMutex.lock()`.
    case mutex
    /// `CoSemaphore.wait()`.
    case semaphore
    /// `CoScope.join()` or `CoFuture.join()`.
    case join
    /// Ready after `Coroutine.yield()`.
    case yield
    /// Ready, moving to another scheduler (`scheduler.await { … }`).
    case hop
    /// Ready, waiting for its shared stack, which another coroutine is running on.
    case sharedStack
    /// A generator's body suspended in `yield`, until the consumer asks for the next element;
    /// `elementType` is its element type.
    case generatorYield(elementType: String)

    /// What the dump prints, e.g. `awaiting Promise<Int>`, `receiving from CoChannel<String>`.
    public var description: String {
      switch self {
      case .future(let type): "awaiting \(type)"
      case .channelReceive(let channel): "receiving from \(channel)"
      case .channelSend(let channel): "sending to \(channel)"
      case .select: "in select"
      case .delay(let deadline):
        "in a delay, \(CoroutineInfo.remaining(until: deadline))"
      case .callback(let valueType): "awaiting a callback (\(valueType))"
      case .asyncOperation(let resultType): "awaiting an async operation (\(resultType))"
      case .mutex: "waiting for a CoMutex"
      case .semaphore: "waiting for a CoSemaphore"
      case .join: "joining"
      case .yield: "yielded"
      case .hop: "moving to another scheduler"
      case .sharedStack: "waiting for its shared stack"
      case .generatorYield(let elementType): "in yield (Generator<\(elementType)>)"
      }
    }
  }

  /// `duration`, with the seconds beyond whole minutes (`1 min 30 s`): for what is left of a
  /// delay or a timeout, where a minute's rounding would hide most of it.
  static func preciseDuration(_ seconds: Double) -> String {
    guard seconds >= 60 else { return duration(seconds) }
    let whole = Int(seconds)
    return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
  }

  /// "N ms left" or "overdue by N ms", for a delay's deadline.
  static func remaining(until deadline: DispatchTime) -> String {
    let now = DispatchTime.now().uptimeNanoseconds
    let target = deadline.uptimeNanoseconds
    return target >= now
      ? "\(preciseDuration(Double(target - now) / 1e9)) left"
      : "overdue by \(duration(Double(now - target) / 1e9))"
  }

  /// A coroutine's stack.
  public struct Stack: Sendable, Hashable {
    /// Shared with other coroutines of its scheduler, or its own.
    public let mode: CoroutineStackMode
    /// Usable bytes (of the shared stack, for a shared one).
    public let size: Int
    /// Bytes of stack the coroutine had in use when it switched out (`nil` while it runs).
    public let inUse: Int?
    /// The stack's high-water mark: bytes from its top down to the deepest page used so far
    /// (page granularity; for a shared stack, by any coroutine that ran on it; `nil` if
    /// unknown).
    public let highWaterMark: Int?
  }

  /// One frame of a backtrace.
  public struct Frame: Sendable, Hashable, CustomStringConvertible {
    /// The return address (the innermost frame: where the coroutine switched out).
    public let address: UInt
    /// The function, demangled (`nil` if no symbol was found).
    public let symbol: String?
    /// Bytes from the function's start to `address`.
    public let offset: UInt
    /// The file name of the executable or library that holds the function.
    public let image: String?
    /// The Swift module the function belongs to (of the outermost declaration a closure or a
    /// specialization comes from), read from its mangled name; `nil` for other languages.
    public let module: String?

    /// `symbol + offset (image)`, or the address when there is no symbol.
    public var description: String {
      let place = image.map { " (\($0))" } ?? ""
      guard let symbol else { return "0x\(String(address, radix: 16))\(place)" }
      return "\(symbol) + \(offset)\(place)"
    }
  }
}
