import AllocationCounter
import Foundation
import NIOPosix

// Noise-free figures (Benchmarks/README.md): heap allocations per operation, gated,
// and a single-workload mode for `valgrind --tool=callgrind` (Benchmarks/instructions.sh).
//
// Allocations are counted as `malloc`-family calls other than `calloc`: libdispatch refills its
// per-thread continuation caches with `calloc` at a rate that depends on which thread ran what
// first (it moves both sides by ±0.3 per operation from run to run), while every Swift object,
// closure context and block comes from `malloc`. The `calloc` rate is printed beside the count.
//
// Per-operation figures are differences: (count of a 2n-operation run − count of an
// n-operation run) ÷ n, after a warm-up run. Set-up costs that do not grow with n (queues,
// the two coroutines of C2/C3, the generator of C4, the first use of a type's metadata)
// cancel out.

/// An allocation budget: the most Covenant's side may allocate per operation, either beyond its
/// baseline's count (`extra`) or in all (`absolute`).
enum AllocationBudget {
  case extra(Double)
  case absolute(Double)

  var text: String {
    switch self {
    case .extra(let n): return "extra ≤ \(Int(n))"
    case .absolute(let n): return "in all ≤ \(Int(n))"
    }
  }
}

let allocationBudgets: [String: AllocationBudget] = [
  "P1": .extra(2), "P2": .extra(2), "P3": .extra(0), "C1": .extra(2),
  "C2": .absolute(1), "C3": .absolute(0), "C4": .absolute(0), "A1": .absolute(0),
  "C6": .absolute(1),
  // B1: the job object of each `pool.await`; B2: Foundation's read allocates more than ours.
  "B1": .extra(1), "B2": .extra(0),
  // C7's closures capture nothing, so "no more than the caller's closures" is 0 in all.
  "C7": .absolute(0), "C7P": .absolute(0),
  "T1": .extra(0), "S1": .absolute(0), "S1A": .absolute(0), "S2": .absolute(0),
  // F1: a chain of three stages allocates nothing per element (the goal).
  "F1": .absolute(0), "F2": .absolute(0), "F3": .absolute(0),
]

/// Operations per counted run, per id (the second run does twice as many).
let countedOperations: [String: Int] = [
  "P1": 2_000, "P2": 10_000, "P3": 20_000, "C1": 10_000, "C2": 20_000, "C3": 20_000,
  "C4": 50_000, "C7": 20_000, "C7P": 20_000, "A1": 50_000,
  "T1": 20_000, "S1": 100_000, "S1A": 100_000, "S2": 20_000, "C6": 20_000,
  "B1": 20_000, "B2": 10_000,
  "F1": 50_000, "F2": 20_000, "F3": 200_000,
]

/// Allocations (without `calloc`) and `calloc`s per operation of `run`: the difference between
/// a 2n and an n run, over n.
func allocationsPerOperation(_ n: Int, _ run: (Int) -> Void) -> (mallocs: Double, callocs: Double) {
  run(min(n, 1_000))  // warm-up: lazily made metadata, caches, pools
  func counted(_ count: Int) -> (Int64, Int64) {
    cov_allocation_counting(1)
    let before = (cov_allocation_count(), cov_calloc_count())
    run(count)
    let after = (cov_allocation_count(), cov_calloc_count())
    cov_allocation_counting(0)
    let callocs = after.1 - before.1
    return (after.0 - before.0 - callocs, callocs)
  }
  let once = counted(n)
  let twice = counted(2 * n)
  return (Double(twice.0 - once.0) / Double(n), Double(twice.1 - once.1) / Double(n))
}

/// `--allocations`: prints allocations per operation of both sides of every selected id and
/// its budget; returns false when any id is over budget.
func runAllocationCounts(_ selected: [String]) -> Bool {
  guard cov_allocation_counter_active() != 0 else {
    emit("allocations: the malloc counter is not active on this platform; nothing checked")
    return true
  }
  let loopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  defer { try? loopGroup.syncShutdownGracefully() }
  var allPass = true
  for workload in makeWorkloads(loop: loopGroup.next()) where selected.contains(workload.id) {
    guard let budget = allocationBudgets[workload.id], let n = countedOperations[workload.id]
    else { continue }
    let (covenant, covenantCallocs) = allocationsPerOperation(n, workload.covenant)
    let (baseline, baselineCallocs) = allocationsPerOperation(n, workload.baseline)
    let pass: Bool
    let figure: Double
    switch budget {
    case .extra(let limit):
      figure = covenant - baseline
      pass = figure <= limit + 0.05
    case .absolute(let limit):
      figure = covenant
      pass = figure <= limit + 0.05
    }
    allPass = allPass && pass
    emit(
      [
        "\(workload.id) allocs/op", String(format: "covenant=%.2f", covenant),
        String(format: "baseline(%@)=%.2f", workload.baselineName, baseline),
        String(format: "extra=%.2f", covenant - baseline), "budget: \(budget.text)",
        pass ? "PASS" : "MISS",
        String(format: "(calloc/op: %.2f vs %.2f)", covenantCallocs, baselineCallocs),
      ].joined(separator: "  "))
    _ = figure
  }
  return allPass
}

/// `--run ID --side covenant|baseline --ops N`: one warm-up of 1,000 operations, then N; for
/// callgrind, which Benchmarks/instructions.sh runs with N and 2N.
func runSingleWorkload(_ id: String, side: Side, operations: Int) {
  let loopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  defer { try? loopGroup.syncShutdownGracefully() }
  guard let workload = makeWorkloads(loop: loopGroup.next()).first(where: { $0.id == id }) else {
    emit("no workload \(id)")
    exit(64)
  }
  let run = side == .covenant ? workload.covenant : workload.baseline
  run(1_000)
  run(operations)
}
