// Template of the generated SnippetRunner's main.swift (check_snippets.py fills in the lines
// marked IMPORTS and CASES). `SnippetRunner <module>.<function>` runs one documentation
// snippet as a coroutine on a global queue, so it may `await`, while the main thread keeps its
// run loop turning (blocks on the main queue run too). When the snippet returns, the runner
// waits for DispatchGroup.promises to empty, so promise blocks it started finish printing.
import Covenant
import Dispatch
import Foundation
import Synchronization

// IMPORTS

func snippet(named name: String) -> (() throws -> Void)? {
  switch name {
  // CASES
  default: return nil
  }
}

guard CommandLine.arguments.count == 2, let body = snippet(named: CommandLine.arguments[1]) else {
  FileHandle.standardError.write(
    "usage: SnippetRunner <module>.<snippet function>\n".data(using: .utf8)!)
  exit(2)
}

let outcome = Mutex<Result<Void, any Error>?>(nil)
nonisolated(unsafe) let run = body
DispatchQueue.global().startCoroutine {
  let result = Result { try run() }
  outcome.withLock { $0 = result }
}
let deadline = Date().addingTimeInterval(50)
while outcome.withLock({ $0 }) == nil, Date() < deadline {
  _ = RunLoop.current.run(mode: .default, before: Date().addingTimeInterval(0.005))
}
switch outcome.withLock({ $0 }) {
case .success?:
  _ = waitForPromises(timeout: 10)
  exit(0)
case .failure(let error)?:
  FileHandle.standardError.write("snippet threw \(error)\n".data(using: .utf8)!)
  exit(1)
case nil:
  FileHandle.standardError.write("snippet did not return within 50 s\n".data(using: .utf8)!)
  exit(1)
}
