// Swift 6 must reject this: a Coroutine.start body that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  Coroutine.start { count += 1 }
  _ = count
}
