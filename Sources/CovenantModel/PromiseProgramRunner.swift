import Covenant
import Dispatch
import Foundation

/// Runs a `PromiseProgram` against the library and checks every node against the model.
public enum PromiseProgramRunner {
  /// What a run did: operations performed, and failures (empty when the program passed).
  public struct Report: Sendable {
    /// Library calls made (promises created, resolutions, observers, awaits).
    public var operations = 0
    /// One line per violated invariant, empty if none.
    public var failures: [String] = []
  }

  /// Builds `program` with the library, resolves its sources from random threads, waits for
  /// every node the model says resolves (at most `timeout` seconds: more is a hang), and
  /// checks: the outcome is one the model allows; it follows from the outcomes its inputs
  /// actually had; each observer ran once and each block ran as often as the outcome implies;
  /// never-resolved nodes are still pending; and once dropped, every promise is deallocated.
  public static func run(_ program: PromiseProgram, timeout: TimeInterval = 20) -> Report {
    var report = Report()
    let log = Observations(count: program.nodes.count)
    var promises: [Promise<Int>] = []
    var late: [(Promise<Int>, [ModelOutcome])] = []
    var random = SplitMix64(seed: program.seed ^ 0xA5A5_A5A5)
    for (index, node) in program.nodes.enumerated() {
      let queue = ModelSchedulers.queues[node.queue]
      let promise: Promise<Int>
      switch node.operation {
      case .source(let plan, let extra, let early):
        promise = Promise<Int>.pending()
        if plan != .never {
          if early {
            resolve(promise, [plan] + extra)
          } else {
            late.append((promise, [plan] + extra))
          }
        }
      case .resolved(let outcome):
        switch outcome {
        case .value(let value): promise = Promise<Int>(value)
        default: promise = Promise<Int>(ModelError(code: code(outcome)))
        }
      case .work(let outcome):
        promise = Promise<Int>(on: queue) { () throws -> Int in try get(outcome) }
      case .then(let input, let k):
        promise = promises[input].then(on: queue) { (value: Int) throws -> Int in
          log.body(index)
          return try get(PromiseProgram.thenValue(value, k))
        }
      case .thenPromise(let input, let k):
        promise = promises[input].then(on: queue) { (value: Int) throws -> Promise<Int> in
          log.body(index)
          return Promise<Int>(on: .global()) { () throws -> Int in value + k }
        }
      case .thenVoid(let input):
        promise = promises[input].then(on: queue) { (_: Int) throws -> Void in log.body(index) }
      case .catchPass(let input):
        promise = promises[input].catch(on: queue) { _ in log.body(index) }
      case .recover(let input, let k):
        promise = promises[input].recover(on: queue) { (error: any Error) throws -> Int in
          log.body(index)
          return PromiseProgram.recovered(ModelOutcome.code(of: error), k)
        }
      case .recoverThrowing(let input, let k):
        promise = promises[input].recover(on: queue) { (error: any Error) throws -> Int in
          log.body(index)
          throw ModelError(code: PromiseProgram.rethrown(ModelOutcome.code(of: error), k))
        }
      case .always(let input):
        promise = promises[input].always(on: queue) { log.body(index) }
      case .validate(let input, let k):
        promise = promises[input].validate(on: queue) { value in
          log.body(index)
          return PromiseProgram.isValid(value, k)
        }
      case .all(let inputs):
        promise = all(on: queue, inputs.map { promises[$0] }).then(on: queue) {
          (values: [Int]) -> Int in PromiseProgram.allFold(values)
        }
      case .any(let inputs):
        promise = any(on: queue, inputs.map { promises[$0] }).then(on: queue) {
          (maybes: [Maybe<Int>]) -> Int in
          PromiseProgram.anyFold(
            maybes.map { maybe in
              switch maybe {
              case .value(let value): .value(value)
              case .error(let error): .error(ModelOutcome.code(of: error))
              }
            })
        }
      case .race(let inputs):
        promise = race(on: queue, inputs.map { promises[$0] })
      case .timeoutLong(let input):
        promise = promises[input].timeout(on: queue, 30)
      case .timeoutZero(let input):
        promise = promises[input].timeout(on: queue, 0)
      case .retry(let failures, let attempts):
        promise = retry(on: queue, attempts: attempts, delay: 0) { () throws -> Promise<Int> in
          let run = log.body(index)
          guard run > failures else {
            let error = ModelError(code: PromiseProgram.retryError(run: run))
            if run % 2 == 0 { throw error }
            return Promise<Int>(error)
          }
          return Promise<Int>(PromiseProgram.retryValue)
        }
      case .futureRoundTrip(let input):
        promise = Promise(CoFuture(promises[input]))
      case .futureMap(let input, let k):
        promise = Promise(CoFuture(promises[input]).map { $0 + k })
      case .awaitInCoroutine(let input, let scheduler):
        let source = promises[input]
        promise = Promise(
          ModelSchedulers.schedulers[scheduler].coroutineFuture {
            try source.await()
          })
      case .awaitWithTimeout(let input, let scheduler):
        let source = promises[input]
        promise = Promise(
          ModelSchedulers.schedulers[scheduler].coroutineFuture {
            try source.await(timeout: .milliseconds(1))
          })
      case .canceledParent:
        let parent = CoPromise<Int>()
        let child = parent.map { $0 + 1 }
        child.cancel()
        if child.result.map(ModelOutcome.init) != ModelOutcome.canceled {
          report.failures.append("#\(index): a cancelled future is not failed with .canceled")
        }
        promise = Promise(parent)
      }
      promises.append(promise)
    }
    // Observe every node that must resolve.
    let group = DispatchGroup()
    for (index, node) in program.nodes.enumerated() where node.allowed != [.never] {
      let queue = ModelSchedulers.queues[random.int(0...2)]
      group.enter()
      promises[index].then(on: queue) { (value: Int) -> Void in
        if log.observe(index, .value(value)) { group.leave() }
      }.catch(on: queue) { error in
        if log.observe(index, .error(ModelOutcome.code(of: error))) { group.leave() }
      }
    }
    // Resolve the late sources from random threads, in random order.
    late.shuffle(using: &random)
    for (promise, outcomes) in late {
      ModelSchedulers.queues[random.int(0...2)].async { resolve(promise, outcomes) }
    }
    late.removeAll()
    report.operations = program.nodes.count * 2 + late.count
    if group.wait(timeout: .now() + timeout) == .timedOut {
      let stuck = program.nodes.indices.filter {
        program.nodes[$0].allowed != [.never] && log.outcome($0) == nil
      }
      report.failures.append("hang: nodes \(stuck) unresolved after \(Int(timeout)) s")
      return report
    }
    check(program, promises, log, &report)
    // Dropped, everything must go away: pending promises included (they leave the group).
    let weak = promises.map { WeakBox($0) }
    promises.removeAll()
    if !eventually(timeout: timeout, { weak.allSatisfy { $0.object == nil } }) {
      let alive = weak.indices.filter { weak[$0].object != nil }
      report.failures.append("leak: nodes \(alive) still alive after being dropped")
    }
    return report
  }

  private static func check(
    _ program: PromiseProgram, _ promises: [Promise<Int>], _ log: Observations,
    _ report: inout Report
  ) {
    // The model applied to what the inputs actually did.
    let observed = program.nodes.indices.map { index in
      PromiseProgram.Node(
        operation: program.nodes[index].operation, queue: 0,
        allowed: [log.outcome(index) ?? .never])
    }
    for (index, node) in program.nodes.enumerated() {
      let outcome = log.outcome(index) ?? .never
      func fail(_ text: String) { report.failures.append("#\(index) \(node.operation): \(text)") }
      if node.allowed == [.never] {
        if !promises[index].isPending { fail("resolved, but the model says it never resolves") }
        if log.observations(index) != 0 { fail("observer ran on a never-resolved node") }
      } else if log.observations(index) != 1 {
        fail("observer ran \(log.observations(index)) times")
      }
      if !node.allowed.contains(outcome) { fail("ended \(outcome), model allows \(node.allowed)") }
      if let fromInputs = PromiseProgram.model(node.operation, observed),
        !fromInputs.contains(outcome)
      {
        fail("ended \(outcome), but its inputs' outcomes allow only \(fromInputs)")
      }
      if let expected = expectedBodyRuns(node.operation, observed), log.bodyRuns(index) != expected
      {
        fail("its block ran \(log.bodyRuns(index)) times, expected \(expected)")
      }
    }
  }

  /// How many times a node's block must have run, given its inputs' actual outcomes.
  private static func expectedBodyRuns(
    _ operation: PromiseProgram.Operation, _ observed: [PromiseProgram.Node]
  ) -> Int? {
    func input(_ index: Int) -> ModelOutcome { observed[index].allowed.first! }
    switch operation {
    case .then(let i, _), .thenPromise(let i, _), .thenVoid(let i), .validate(let i, _):
      if case .value = input(i) { return 1 } else { return 0 }
    case .catchPass(let i), .recover(let i, _), .recoverThrowing(let i, _):
      return input(i).isError ? 1 : 0
    case .always(let i):
      return input(i) == .never ? 0 : 1
    case .retry(let failures, let attempts):
      return min(failures, max(0, attempts)) + 1
    default:
      return nil
    }
  }

  private static func resolve(_ promise: Promise<Int>, _ outcomes: [ModelOutcome]) {
    for outcome in outcomes {
      switch outcome {
      case .value(let value): promise.fulfill(value)
      default: promise.reject(ModelError(code: code(outcome)))
      }
    }
  }

  private static func code(_ outcome: ModelOutcome) -> Int {
    if case .error(let code) = outcome { code } else { -2 }
  }

  private static func get(_ outcome: ModelOutcome) throws -> Int {
    switch outcome {
    case .value(let value): return value
    default: throw ModelError(code: code(outcome))
    }
  }
}

/// Polls `condition` until it holds or `timeout` passes (a bound against hangs, not a timing
/// assertion: the condition normally holds at once or within microseconds).
public func eventually(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
  let deadline = Date(timeIntervalSinceNow: timeout)
  while !condition() {
    if Date() > deadline { return false }
    usleep(100)
  }
  return true
}

/// A weak reference, for leak checks.
public final class WeakBox<Object: AnyObject>: @unchecked Sendable {
  /// The referenced object, nil once it is deallocated.
  public private(set) weak var object: Object?
  /// A weak reference to `object`.
  public init(_ object: Object) { self.object = object }
}

/// What a running program observed, per node (thread-safe).
final class Observations: @unchecked Sendable {
  private let lock = NSLock()
  private var outcomes: [ModelOutcome?]
  private var observed: [Int]
  private var runs: [Int]

  init(count: Int) {
    outcomes = Array(repeating: nil, count: count)
    observed = Array(repeating: 0, count: count)
    runs = Array(repeating: 0, count: count)
  }

  /// Records an observer call; true if it is the node's first.
  func observe(_ node: Int, _ outcome: ModelOutcome) -> Bool {
    lock.withLock {
      observed[node] += 1
      if outcomes[node] == nil { outcomes[node] = outcome }
      return observed[node] == 1
    }
  }

  /// Records a run of the node's block; returns the run number (1 for the first).
  @discardableResult func body(_ node: Int) -> Int {
    lock.withLock {
      runs[node] += 1
      return runs[node]
    }
  }

  func outcome(_ node: Int) -> ModelOutcome? { lock.withLock { outcomes[node] } }
  func observations(_ node: Int) -> Int { lock.withLock { observed[node] } }
  func bodyRuns(_ node: Int) -> Int { lock.withLock { runs[node] } }
}
