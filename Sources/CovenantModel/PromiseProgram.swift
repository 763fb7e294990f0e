/// A random program of promise and future operations (the Promises and FuturesChannelsAndSelect articles) and its reference model.
///
/// A program is a list of nodes; each node is a promise built from earlier nodes by one
/// operation. `allowed` is what the sequential model says the node may end as: one outcome for
/// deterministic operations, several where the documented semantics leave a race open (`race`,
/// the first rejection of `all`, the last rejection of `any`, a zero `timeout`), `[.never]` for a
/// node that must stay pending. Generation keeps every set either `[.never]` or free of
/// `.never`, so the runner knows which nodes to wait for.
public struct PromiseProgram: Sendable, CustomStringConvertible {
  /// One operation.
  public enum Operation: Sendable, Hashable {
    /// `Promise.pending()`, resolved with `plan` (never if `.never`), `early` (right after it
    /// is created, before its dependents exist) or late (from a random queue once the whole
    /// program is built); `extra` resolutions follow the first and must be ignored.
    case source(plan: ModelOutcome, extra: [ModelOutcome], early: Bool)
    /// `Promise(value)` / `Promise(error)`.
    case resolved(ModelOutcome)
    /// `Promise(on:) { value or throw }`.
    case work(ModelOutcome)
    case then(Int, k: Int)
    case thenPromise(Int, k: Int)
    case thenVoid(Int)
    case catchPass(Int)
    case recover(Int, k: Int)
    case recoverThrowing(Int, k: Int)
    case always(Int)
    case validate(Int, k: Int)
    case all([Int])
    case any([Int])
    case race([Int])
    /// `timeout(10)` on a node that resolves: mirrors it.
    case timeoutLong(Int)
    /// `timeout(0)`: mirrors it or times out.
    case timeoutZero(Int)
    /// `retry(attempts:delay: 0)` whose work fails `failures` times, then succeeds.
    case retry(failures: Int, attempts: Int)
    /// `Promise(CoFuture(promise))`.
    case futureRoundTrip(Int)
    /// `CoFuture(promise).map { $0 + k }`.
    case futureMap(Int, k: Int)
    /// A coroutine on scheduler `scheduler` awaits the node (`promise.await()`).
    case awaitInCoroutine(Int, scheduler: Int)
    /// A coroutine awaits a never-resolved node with a 1 ms timeout.
    case awaitWithTimeout(Int, scheduler: Int)
    /// A `CoPromise` never resolved, a future mapped from it, the mapped one cancelled: both end
    /// cancelled (the node is the parent, which the cancel must reach).
    case canceledParent
  }

  /// A node: its operation, the queue index its callbacks use, and the model's verdict.
  public struct Node: Sendable {
    public let operation: Operation
    public let queue: Int
    public let allowed: Set<ModelOutcome>
  }

  /// The seed that generated this program.
  public let seed: UInt64
  /// The nodes, each built from earlier ones.
  public let nodes: [Node]

  /// Builds the program of `seed` (same seed, same program).
  public init(seed: UInt64, maxNodes: Int = 12) {
    self.seed = seed
    var random = SplitMix64(seed: seed)
    var nodes: [Node] = []
    let count = random.int(2...maxNodes)
    while nodes.count < count {
      let operation = Self.randomOperation(&random, nodes)
      guard let allowed = Self.model(operation, nodes) else { continue }
      if allowed.contains(.never) && allowed.count > 1 { continue }  // see the type's comment
      nodes.append(Node(operation: operation, queue: random.int(0...2), allowed: allowed))
    }
    self.nodes = nodes
  }

  public var description: String {
    nodes.enumerated().map { index, node in
      // Sorted: a Set's order differs between equal sets, the text must not.
      "  #\(index) \(node.operation) -> \(node.allowed.map(\.description).sorted())"
    }.joined(separator: "\n")
  }

  // MARK: - Pure functions the operations apply (shared by the model and the program)

  static func thenValue(_ value: Int, _ k: Int) -> ModelOutcome {
    (value + k) % 5 == 0 ? .error(100 + k) : .value((value &* 3 &+ k) % 10_007)
  }
  static func recovered(_ code: Int, _ k: Int) -> Int { (code &* 7 &+ k) % 10_007 }
  static func rethrown(_ code: Int, _ k: Int) -> Int { 300 + (code + k) % 1_000 }
  static func isValid(_ value: Int, _ k: Int) -> Bool { (value - k) % 2 == 0 }
  static func allFold(_ values: [Int]) -> Int { values.reduce(17) { ($0 &* 31 &+ $1) % 1_000_003 } }
  static func anyFold(_ outcomes: [ModelOutcome]) -> Int {
    outcomes.reduce(19) { hash, outcome in
      switch outcome {
      case .value(let value): return (hash &* 31 &+ value) % 1_000_003
      case .error(let code): return (hash &* 37 &+ code &+ 1) % 1_000_003
      case .never: return hash
      }
    }
  }
  static let retryValue = 4_242
  static func retryError(run: Int) -> Int { 500 + run }

  // MARK: - Generation

  private static func randomOperation(_ random: inout SplitMix64, _ nodes: [Node]) -> Operation {
    func leaf() -> ModelOutcome {
      random.chance(65) ? .value(random.int(0...99)) : .error(random.int(1...20))
    }
    func node() -> Int { random.int(0...(nodes.count - 1)) }
    func resolving() -> Int? {
      let candidates = nodes.indices.filter { !nodes[$0].allowed.contains(.never) }
      return candidates.isEmpty ? nil : random.pick(candidates)
    }
    func several() -> [Int] { (0..<random.int(0...4)).map { _ in node() } }
    let k = random.int(0...9)
    if nodes.isEmpty || random.chance(22) {
      switch random.int(0...9) {
      case 0...4:
        let plan = random.chance(12) ? .never : leaf()
        let extra = plan == .never ? [] : (0..<random.int(0...2)).map { _ in leaf() }
        return .source(plan: plan, extra: extra, early: random.chance(30))
      case 5, 6: return .resolved(leaf())
      case 7, 8: return .work(leaf())
      default: return .retry(failures: random.int(0...3), attempts: random.int(-1...3))
      }
    }
    switch random.int(0...19) {
    case 0, 1: return .then(node(), k: k)
    case 2: return .thenPromise(node(), k: k)
    case 3: return .thenVoid(node())
    case 4: return .catchPass(node())
    case 5: return .recover(node(), k: k)
    case 6: return .recoverThrowing(node(), k: k)
    case 7: return .always(node())
    case 8: return .validate(node(), k: k)
    case 9: return .all(several())
    case 10: return .any(several())
    case 11: return .race(several().isEmpty ? [node()] : several() + [node()])
    case 12: return resolving().map { .timeoutLong($0) } ?? .thenVoid(node())
    case 13: return .timeoutZero(node())
    case 14: return .futureRoundTrip(node())
    case 15: return .futureMap(node(), k: k)
    case 16, 17:
      let target = node()
      let scheduler = random.int(0...(ModelSchedulers.schedulers.count - 1))
      return nodes[target].allowed == [.never]
        ? .awaitWithTimeout(target, scheduler: scheduler)
        : .awaitInCoroutine(target, scheduler: scheduler)
    case 18: return .canceledParent
    default: return .retry(failures: random.int(0...3), attempts: random.int(-1...3))
    }
  }

  // MARK: - The reference model (sequential)

  /// What `operation` may end as, given the earlier nodes; nil if the set would be too large to
  /// enumerate (the generator then picks another operation).
  public static func model(_ operation: Operation, _ nodes: [Node]) -> Set<ModelOutcome>? {
    func unary(_ input: Int, _ transform: (ModelOutcome) -> ModelOutcome) -> Set<ModelOutcome> {
      Set(nodes[input].allowed.map { $0 == .never ? .never : transform($0) })
    }
    switch operation {
    case .source(let plan, _, _): return [plan]
    case .resolved(let outcome), .work(let outcome): return [outcome]
    case .then(let input, let k):
      return unary(input) { if case .value(let v) = $0 { thenValue(v, k) } else { $0 } }
    case .thenPromise(let input, let k):
      return unary(input) { if case .value(let v) = $0 { .value(v + k) } else { $0 } }
    case .thenVoid(let input), .catchPass(let input), .always(let input),
      .futureRoundTrip(let input), .timeoutLong(let input), .awaitInCoroutine(let input, _):
      return unary(input) { $0 }
    case .recover(let input, let k):
      return unary(input) { if case .error(let c) = $0 { .value(recovered(c, k)) } else { $0 } }
    case .recoverThrowing(let input, let k):
      return unary(input) { if case .error(let c) = $0 { .error(rethrown(c, k)) } else { $0 } }
    case .validate(let input, let k):
      return unary(input) {
        if case .value(let v) = $0, !isValid(v, k) { ModelOutcome.validationFailure } else { $0 }
      }
    case .futureMap(let input, let k):
      return unary(input) { if case .value(let v) = $0 { .value(v + k) } else { $0 } }
    case .timeoutZero(let input):
      let mirrored = nodes[input].allowed.subtracting([.never])
      return mirrored.union([ModelOutcome.timedOut])
    case .awaitWithTimeout: return [ModelOutcome.futureTimeout]
    case .canceledParent: return [ModelOutcome.canceled]
    case .retry(let failures, let attempts):
      let runs = min(failures, max(0, attempts)) + 1
      return failures <= max(0, attempts) ? [.value(retryValue)] : [.error(retryError(run: runs))]
    case .all(let inputs), .any(let inputs), .race(let inputs):
      var combinations: [[ModelOutcome]] = [[]]
      for input in inputs {
        combinations = combinations.flatMap { prefix in nodes[input].allowed.map { prefix + [$0] } }
        if combinations.count > 256 { return nil }
      }
      var allowed = Set<ModelOutcome>()
      for outcomes in combinations { allowed.formUnion(combine(operation, outcomes)) }
      return allowed
    }
  }

  /// What an n-ary operation (`all`, `any`, `race`) may end as when its inputs end as `outcomes` (in order).
  public static func combine(_ operation: Operation, _ outcomes: [ModelOutcome]) -> Set<
    ModelOutcome
  > {
    let errors = outcomes.filter(\.isError)
    switch operation {
    case .all:
      // Fails fast on the first rejection (whichever settles first), even if others never do.
      if !errors.isEmpty { return Set(errors) }
      if outcomes.contains(.never) { return [.never] }
      return [.value(allFold(outcomes.map { if case .value(let v) = $0 { v } else { 0 } }))]
    case .any:
      if outcomes.contains(.never) { return [.never] }
      if outcomes.isEmpty || errors.count < outcomes.count { return [.value(anyFold(outcomes))] }
      return Set(errors)  // all rejected: the error of the last to settle
    case .race:
      let settled = outcomes.filter { $0 != .never }
      return settled.isEmpty ? [.never] : Set(settled)
    default:
      return []
    }
  }
}
