import Covenant
import Dispatch
import Foundation

/// A random program over one `CoSemaphore` (or `CoMutex`): workers, each a coroutine on a
/// random scheduler, take and return permits in random ways (waiting, waiting with a timeout,
/// trying, `withPermit`), await various things while holding one, and some of them are
/// cancelled at a random moment by a scope deadline.
public struct SyncProgram: Sendable, CustomStringConvertible {
  /// How a step asks for a permit.
  public enum Acquire: Sendable, CaseIterable {
    case wait, waitWithTimeout, tryWait, withPermit
  }
  /// What a worker does while it holds a permit.
  public enum Hold: Sendable, CaseIterable {
    case nothing, yield, awaitElsewhere, delay
  }
  /// One step of a worker.
  public struct Step: Sendable, CustomStringConvertible {
    public let acquire: Acquire
    public let hold: Hold
    /// For `waitWithTimeout` and `delay`, in microseconds.
    public let micros: Int
    public var description: String { "\(acquire)/\(hold)/\(micros)" }
  }

  /// The seed that generated this program.
  public let seed: UInt64
  /// The semaphore's permits (1 for a mutex).
  public let permits: Int
  /// Whether the program runs on a `CoMutex` (then only `wait`, `tryWait` and `withPermit`, as
  /// `lock`, `tryLock` and `withLock`).
  public let usesMutex: Bool
  /// The steps of each worker.
  public let workers: [[Step]]
  /// Scheduler index (into `ModelSchedulers.schedulers`) per worker.
  public let schedulers: [Int]
  /// Which workers run in the scope that is cancelled.
  public let inCanceledScope: [Bool]
  /// When that scope's deadline cancels it, in microseconds from the start.
  public let cancelAfterMicros: Int

  /// Builds the program of `seed`.
  public init(seed: UInt64, maxWorkers: Int = 6, maxSteps: Int = 20) {
    self.seed = seed
    var random = SplitMix64(seed: seed)
    permits = random.int(1...3)
    usesMutex = permits == 1 && random.int(0...1) == 0
    let acquires: [Acquire] = usesMutex ? [.wait, .tryWait, .withPermit] : Acquire.allCases
    workers = (0..<random.int(2...maxWorkers)).map { _ in
      (0..<random.int(1...maxSteps)).map { _ in
        Step(
          acquire: random.pick(acquires), hold: random.pick(Hold.allCases),
          micros: random.int(0...1_500))
      }
    }
    schedulers = workers.map { _ in random.int(0...(ModelSchedulers.schedulers.count - 1)) }
    inCanceledScope = workers.map { _ in random.int(0...2) == 0 }
    cancelAfterMicros = random.int(0...4_000)
  }

  public var description: String {
    "\(usesMutex ? "mutex" : "semaphore(\(permits))"), workers \(workers), schedulers \(schedulers), "
      + "canceled \(inCanceledScope) after \(cancelAfterMicros) µs"
  }
}

/// Runs a `SyncProgram` and checks the accounting of permits.
public enum SyncProgramRunner {
  /// Runs `program`; returns the steps done and the violated invariants (empty if none): never
  /// more holders than permits; every step of a worker that started ends exactly one way
  /// (acquired, timed out, busy, cancelled), and only a cancelled worker may not start; `CoroutineError.canceled` only in cancelled workers, `CoFutureError.timeout`
  /// only from timed waits, nothing else thrown; every permit back at the end (none lost, none
  /// made up); nothing hangs; the primitive and every worker's state are freed once done (no
  /// queue entry or timer keeps a coroutine).
  public static func run(_ program: SyncProgram, timeout: TimeInterval = 20) -> (
    operations: Int, failures: [String]
  ) {
    var semaphore: CoSemaphore? = CoSemaphore(value: program.permits)
    var mutex: CoMutex? = CoMutex()
    let ledger = PermitLedger(permits: program.permits)
    let scope = CoScope()
    // The other workers' scope, never cancelled: `join` waits for every worker, including those
    // of the cancelled scope that the deadline stopped before they started (they never run).
    let others = CoScope()
    var tokens: [WeakBox<WorkerToken>] = []
    scope.cancel(after: .microseconds(program.cancelAfterMicros))
    for (index, steps) in program.workers.enumerated() {
      let primitive = program.usesMutex ? Primitive.mutex(mutex!) : .semaphore(semaphore!)
      let token = WorkerToken()
      tokens.append(WeakBox(token))
      ModelSchedulers.schedulers[program.schedulers[index]].startCoroutine(
        in: program.inCanceledScope[index] ? scope : others
      ) {
        _ = token
        ledger.start(worker: index)
        for step in steps {
          ledger.record(runStep(step, on: primitive, ledger), worker: index)
        }
      }
    }
    let joined = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      try? scope.join()
      try? others.join()
      joined.signal()
    }
    if joined.wait(timeout: .now() + timeout) == .timedOut {
      return (0, ["hang: workers still running after \(Int(timeout)) s; \(ledger.summary)"])
    }
    var failures = ledger.check(program)
    if let semaphore, semaphore.availablePermits != program.permits {
      failures.append(
        "\(semaphore.availablePermits) permits free at the end, \(program.permits) expected")
    }
    if let mutex, program.usesMutex, mutex.isLocked {
      failures.append("the mutex is still locked at the end")
    }
    let weakPrimitives = (WeakBox(semaphore!), WeakBox(mutex!))
    semaphore = nil
    mutex = nil
    if !eventually(
      timeout: timeout,
      {
        weakPrimitives.0.object == nil && weakPrimitives.1.object == nil
          && tokens.allSatisfy { $0.object == nil }
      })
    {
      failures.append("leak: the primitive or a finished worker is still alive")
    }
    return (program.workers.reduce(0) { $0 + $1.count }, failures)
  }

  private enum Primitive {
    case semaphore(CoSemaphore)
    case mutex(CoMutex)
  }

  /// Runs one step; returns how it ended.
  private static func runStep(
    _ step: SyncProgram.Step, on primitive: Primitive, _ ledger: PermitLedger
  ) -> StepOutcome {
    do {
      switch (step.acquire, primitive) {
      case (.withPermit, .semaphore(let semaphore)):
        try semaphore.withPermit { try hold(step, ledger) }
        return .acquired
      case (.withPermit, .mutex(let mutex)):
        try mutex.withLock { try hold(step, ledger) }
        return .acquired
      case (.tryWait, .semaphore(let semaphore)):
        guard semaphore.tryWait() else { return .busy }
      case (.tryWait, .mutex(let mutex)):
        guard mutex.tryLock() else { return .busy }
      case (.wait, .semaphore(let semaphore)):
        try semaphore.wait()
      case (.wait, .mutex(let mutex)):
        try mutex.lock()
      case (.waitWithTimeout, .semaphore(let semaphore)):
        try semaphore.wait(timeout: .microseconds(step.micros))
      case (.waitWithTimeout, .mutex(let mutex)):
        try mutex.lock()
      }
      // Holding a permit taken by hand: give it back however the hold ends.
      defer {
        switch primitive {
        case .semaphore(let semaphore): semaphore.signal()
        case .mutex(let mutex): mutex.unlock()
        }
      }
      try hold(step, ledger)
      return .acquired
    } catch {
      return .failed(ModelOutcome.code(of: error))
    }
  }

  /// Holds a permit: counts the holder in, awaits something, counts it out (even when the await
  /// throws).
  private static func hold(_ step: SyncProgram.Step, _ ledger: PermitLedger) throws {
    ledger.enter()
    defer { ledger.leave() }
    switch step.hold {
    case .nothing: break
    case .yield: try Coroutine.yield()
    case .awaitElsewhere:
      let reply = CoPromise<Int>()
      DispatchQueue.global().async { reply.success(1) }
      _ = try reply.await()
    case .delay: try Coroutine.delay(.microseconds(step.micros))
    }
  }
}

/// Something each worker's coroutine holds, to check that finished workers are freed.
final class WorkerToken: Sendable {}

/// How a step ended.
enum StepOutcome: Equatable {
  case acquired
  case busy
  case failed(Int)
}

/// What a sync program observed (thread-safe).
final class PermitLedger: @unchecked Sendable {
  private let lock = NSLock()
  private let permits: Int
  private var holders = 0
  private var mostHolders = 0
  private var outcomes: [Int: [StepOutcome]] = [:]
  private var started: Set<Int> = []

  init(permits: Int) { self.permits = permits }

  func enter() {
    lock.withLock {
      holders += 1
      mostHolders = max(mostHolders, holders)
    }
  }

  func leave() { lock.withLock { holders -= 1 } }

  /// `worker`'s body has started (a worker cancelled before it started never runs it).
  func start(worker: Int) {
    _ = lock.withLock { started.insert(worker) }
  }

  func record(_ outcome: StepOutcome, worker: Int) {
    lock.withLock { outcomes[worker, default: []].append(outcome) }
  }

  var summary: String { lock.withLock { "outcomes \(outcomes.mapValues { $0.count })" } }

  func check(_ program: SyncProgram) -> [String] {
    lock.withLock {
      var failures: [String] = []
      if mostHolders > permits {
        failures.append("\(mostHolders) holders at once, \(permits) permits")
      }
      if holders != 0 { failures.append("\(holders) holders left at the end") }
      for (worker, steps) in program.workers.enumerated() {
        let seen = outcomes[worker] ?? []
        guard started.contains(worker) else {
          if !program.inCanceledScope[worker] { failures.append("worker \(worker): never ran") }
          continue
        }
        if seen.count != steps.count {
          failures.append("worker \(worker): \(seen.count) outcomes for \(steps.count) steps")
        }
        for (step, outcome) in zip(steps, seen) {
          switch outcome {
          case .acquired: break
          case .busy:
            if step.acquire != .tryWait { failures.append("worker \(worker): busy from \(step)") }
          case .failed(9005):  // CoroutineError.canceled
            if !program.inCanceledScope[worker] {
              failures.append("worker \(worker): cancelled without a cancel (\(step))")
            }
          case .failed(9004):  // CoFutureError.timeout
            if step.acquire != .waitWithTimeout || program.usesMutex {
              failures.append("worker \(worker): timeout from \(step)")
            }
          case .failed(let code):
            failures.append("worker \(worker): unexpected error \(code) from \(step)")
          }
        }
      }
      return failures
    }
  }
}
