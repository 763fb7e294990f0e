// Swift 6 must reject this: a future callback that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  CoFuture<Int>(result: .success(1)).whenSuccess { count += $0 }
  _ = count
}
