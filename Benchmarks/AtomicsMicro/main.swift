// Workloads of Benchmarks/AtomicsMicro/run.sh: `Micro <side>-<workload> <n>` runs n operations
// (callgrind subtracts an n run from a 2n run); `Micro contended <n>` times a contended lock.
import Atomics
import CCovenantShims
import Dispatch
import Synchronization

final class InlineSide: Sendable {
  let word = InlineAtomic<UInt64>(0)
  let flag = InlineAtomic<Bool>(false)
  let mutex = InlineMutex<(UInt, UInt)>((0, 0))
}

final class StdlibSide: Sendable {
  let word = Atomic<UInt64>(0)
  let flag = Atomic<Bool>(false)
  let mutex = Mutex<(UInt, UInt)>((0, 0))
}

/// The shape of Covenant's critical sections before the layer (`Mutex.withCriticalSection`):
/// out of line, with the ThreadSanitizer annotation check.
extension Mutex where Value: Sendable {
  @inline(never)
  func annotatedOutOfLine(_ body: (inout Value) -> Void) {
    if _fastPath(cov_sync_annotations_enabled == 0) {
      withLock { body(&$0) }
      return
    }
    withUnsafePointer(to: self) { mutex in
      withLock { value in
        cov_sync_acquire_slow(mutex)
        defer { cov_sync_release_slow(mutex) }
        body(&value)
      }
    }
  }
}

extension InlineMutex {
  @inline(never)
  func outOfLine(_ body: (inout Value) -> Void) { withLock(body) }
}

typealias Step = (InlineSide, StdlibSide, UInt64) -> UInt64

/// One operation per step, each called indirectly: the optimizer sees a single operation on an
/// object it cannot see through, so it can neither merge operations across iterations nor
/// demote the atomics of an object it would otherwise prove private. `run.sh` subtracts the
/// cost of the `empty` step (the indirect call and the loop).
func step(for workload: String) -> Step? {
  switch workload {
  case "empty":
    return { _, _, i in i }
  case "inline-load-store":
    return { inline, _, i in
      inline.word.store(i, ordering: .releasing)
      return inline.word.load(ordering: .acquiring)
    }
  case "stdlib-load-store":
    return { _, stdlib, i in
      stdlib.word.store(i, ordering: .releasing)
      return stdlib.word.load(ordering: .acquiring)
    }
  case "inline-compare-exchange":
    return { inline, _, i in
      inline.word.compareExchange(expected: i, desired: i &+ 1, ordering: .sequentiallyConsistent)
        .original
    }
  case "stdlib-compare-exchange":
    return { _, stdlib, i in
      stdlib.word.compareExchange(expected: i, desired: i &+ 1, ordering: .sequentiallyConsistent)
        .original
    }
  case "inline-bitwise-or":
    return { inline, _, i in
      inline.word.bitwiseOr(i & 7, ordering: .acquiringAndReleasing).oldValue
    }
  case "stdlib-bitwise-or":
    return { _, stdlib, i in
      stdlib.word.bitwiseOr(i & 7, ordering: .acquiringAndReleasing).oldValue
    }
  case "inline-exchange-bool":
    return { inline, _, i in
      inline.flag.exchange(i & 1 == 0, ordering: .acquiringAndReleasing) ? 1 : 0
    }
  case "stdlib-exchange-bool":
    return { _, stdlib, i in
      stdlib.flag.exchange(i & 1 == 0, ordering: .acquiringAndReleasing) ? 1 : 0
    }
  case "inline-lock":
    return { inline, _, i in
      inline.mutex.withLock { count(&$0) }
      return i
    }
  case "stdlib-lock":
    return { _, stdlib, i in
      stdlib.mutex.withLock { count(&$0) }
      return i
    }
  case "inline-lock-out-of-line":
    return { inline, _, i in
      inline.mutex.outOfLine { count(&$0) }
      return i
    }
  case "stdlib-lock-out-of-line":
    return { _, stdlib, i in
      stdlib.mutex.annotatedOutOfLine { count(&$0) }
      return i
    }
  default:
    return nil
  }
}

/// The critical section of every lock workload.
@inline(__always) func count(_ pair: inout (UInt, UInt)) {
  pair.0 &+= 1
  pair.1 &+= 2
}

func run(_ workload: String, _ n: Int) {
  let inline = InlineSide()
  let stdlib = StdlibSide()
  if workload == "contended" { return contended(inline, stdlib, n) }
  guard let step = step(for: workload) else { fatalError("unknown workload \(workload)") }
  var sum: UInt64 = 0
  for i in 0..<UInt64(n) { sum &+= step(inline, stdlib, i) }
  withExtendedLifetime(sum) {}
}

/// 4 threads × n lock round trips on one mutex, each side in turn, 7 times; medians in ns/op.
func contended(_ inline: InlineSide, _ stdlib: StdlibSide, _ n: Int) {
  var inlineTimes: [Double] = []
  var stdlibTimes: [Double] = []
  func time(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(4 * n)
  }
  for _ in 0..<7 {
    inlineTimes.append(
      time {
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
          for _ in 0..<n {
            inline.mutex.withLock { count(&$0) }
          }
        }
      })
    stdlibTimes.append(
      time {
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
          for _ in 0..<n {
            stdlib.mutex.withLock { count(&$0) }
          }
        }
      })
  }
  let inlineMedian = inlineTimes.sorted()[3]
  let stdlibMedian = stdlibTimes.sorted()[3]
  print(
    "contended lock, 4 threads, ns/op (median of 7): InlineMutex \(inlineMedian)"
      + "  Synchronization.Mutex \(stdlibMedian)  ratio \(inlineMedian / stdlibMedian)")
}

let arguments = CommandLine.arguments
run(arguments[1], Int(arguments[2])!)
