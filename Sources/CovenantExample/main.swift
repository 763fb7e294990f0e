import Covenant
import Dispatch

// Command-line programs do not run the main queue: chain on a global queue instead.
DispatchQueue.promises = .global()

let answer = Promise<Int>(on: .global()) { fulfill, _ in fulfill(42) }
print("answer:", try awaitPromise(answer))
