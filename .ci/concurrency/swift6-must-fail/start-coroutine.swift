// Swift 6 must reject this: a coroutine body that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  DispatchQueue.global().startCoroutine { count += 1 }
  _ = count
}
