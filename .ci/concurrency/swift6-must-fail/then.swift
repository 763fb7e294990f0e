// Swift 6 must reject this: a then block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  Promise(1).then { value in count += value }
  _ = count
}
