// Swift 6 must reject this: a closure value that is not Sendable
import Covenant
import Dispatch

func race() {
  var count = 0
  let block: (Int) -> Void = { count += $0 }
  Promise(1).then(block)
  _ = count
}
