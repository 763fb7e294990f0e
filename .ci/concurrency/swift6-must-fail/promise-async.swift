// Swift 6 must reject this: an Async work block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = Promise<Int>(on: .global()) { fulfill, _ in
    count += 1
    fulfill(count)
  }
  _ = count
}
