import Dispatch
import FootprintSupport

// FootprintCore's work with Dispatch alone: a value computed on a global queue, handed to a
// serial queue. Then the same output work, and the memory figures on stdout.
let queue = DispatchQueue(label: "footprint")
let done = DispatchSemaphore(value: 0)
DispatchQueue.global().async {
  let answer = 42
  queue.async {
    precondition(answer == 42)
    sampleMemory()  // the same point of the work as FootprintCore's
    done.signal()
  }
}
done.wait()
print("footprint: done, \(CommandLine.arguments.count) argument(s)")
print(memoryReport())
