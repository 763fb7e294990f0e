// Swift 6 must reject this: a work block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = Promise<Int>(on: .global()) {
    count += 1
    return count
  }
  _ = count
}
