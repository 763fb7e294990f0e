// Swift 6 must reject this: a catch block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  Promise<Int>(PromiseError.timedOut).catch { _ in count += 1 }
  _ = count
}
