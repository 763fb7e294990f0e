// Swift 6 must reject this: a recover block that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  _ = Promise<Int>(PromiseError.timedOut).recover { _ -> Int in
    count += 1
    return count
  }
  _ = count
}
