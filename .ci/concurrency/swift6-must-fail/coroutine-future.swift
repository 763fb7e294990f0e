// Swift 6 must reject this: a coroutineFuture body that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = DispatchQueue.global().coroutineFuture { () -> Int in
    count += 1
    return count
  }
  _ = count
}
