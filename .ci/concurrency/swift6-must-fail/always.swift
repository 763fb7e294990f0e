// Swift 6 must reject this: an always block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  Promise(1).always { count += 1 }
  _ = count
}
