// Swift 6 must reject this: a channel callback that mutates a captured local
import Covenant
import Dispatch

func race() {
  var count = 0
  CoChannel<Int>().whenReceive { _ in count += 1 }
  _ = count
}
