// Swift 6 must reject this: a CoFuture(task:) body that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = CoFuture<Int> {
    count += 1
    return count
  }
  _ = count
}
