// Swift 5 mode: the classic google/promises and SwiftCoroutine style, blocks that capture and
// mutate locals, must keep compiling (the compiler may warn, as it does for DispatchQueue.async).
import Covenant
import Dispatch

func classic() {
  var count = 0
  _ = Promise<Int>(on: .global()) {
    count += 1
    return count
  }
  _ = Promise<Int>(on: .global()) { fulfill, _ in
    count += 1
    fulfill(count)
  }
  Promise(1).then { value in count += value }
  Promise<Int>(PromiseError.timedOut).catch { _ in count += 1 }
  _ = Promise<Int>(PromiseError.timedOut).recover { _ -> Int in
    count += 1
    return count
  }
  Promise(1).always { count += 1 }
  DispatchQueue.global().startCoroutine { count += 1 }
  _ = DispatchQueue.global().coroutineFuture { () -> Int in
    count += 1
    return count
  }
  _ = CoFuture<Int> {
    count += 1
    return count
  }
  Coroutine.start { count += 1 }
  CoFuture<Int>(result: .success(1)).whenSuccess { count += $0 }
  _ = CoFuture<Int>(result: .success(1)).map { value -> Int in
    count += value
    return count
  }
  CoChannel<Int>().whenReceive { _ in count += 1 }
  let block: (Int) -> Void = { count += $0 }
  Promise(1).then(block)
  let start: (CoScope?, @escaping () throws -> Void) -> Void =
    DispatchQueue.global().startCoroutine(in:task:)
  start(nil) { count += 1 }
}
