import CovenantCore  // and, re-exported by it, Dispatch: no `import Dispatch` here on purpose
import FootprintSupport

// A promise fulfilled by a work block on a global queue, awaited by a coroutine on a serial
// queue. Then the same output work as FootprintDispatch, and the memory figures on stdout.
let queue = DispatchQueue(label: "footprint")
let done = DispatchSemaphore(value: 0)
let answer = Promise<Int>(on: .global()) { 42 }
queue.startCoroutine {
  let value = try answer.await()
  precondition(value == 42)
  sampleMemory()  // the peak point: the coroutine and its stack are alive
  done.signal()
}
done.wait()
print("footprint: done, \(CommandLine.arguments.count) argument(s)")
print(memoryReport())
