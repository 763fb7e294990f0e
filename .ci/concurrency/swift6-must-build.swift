// Swift 6 mode: the same APIs with Sendable captures compile without a warning.
import Covenant
import Dispatch
import Synchronization

final class Counter: Sendable {
  private let value = Mutex(0)
  func add(_ amount: Int) { value.withLock { $0 += amount } }
}

func safe() {
  let counter = Counter()
  _ = Promise<Int>(on: .global()) {
    counter.add(1)
    return 1
  }
  _ = Promise<Int>(on: .global()) { fulfill, _ in
    counter.add(1)
    fulfill(1)
  }
  Promise(1).then { value in counter.add(value) }
  Promise<Int>(PromiseError.timedOut).catch { _ in counter.add(1) }
  Promise(1).always { counter.add(1) }
  DispatchQueue.global().startCoroutine { counter.add(1) }
  _ = DispatchQueue.global().coroutineFuture { () -> Int in
    counter.add(1)
    return 1
  }
  Coroutine.start { counter.add(1) }
  CoFuture<Int>(result: .success(1)).whenSuccess { counter.add($0) }
  CoChannel<Int>().whenReceive { _ in counter.add(1) }
  var local = 0  // plain locals stay fine where nothing runs concurrently
  let message: String = (try? CoChannel.select { select in
    select.onReceive(CoChannel<Int>()) { value in
      local += value
      return "got \(value)"
    }
    select.onDefault { "none" }
  }) ?? ""
  _ = (local, message)
}
