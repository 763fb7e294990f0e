// Swift 6 must reject this: a future transform that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = CoFuture<Int>(result: .success(1)).map { value -> Int in
    count += value
    return count
  }
  _ = count
}
