// Only these two imports, on purpose: `import Covenant` must make Dispatch's types visible, as
// the API is written in them (this file does not compile otherwise). CovenantCore's own
// re-export is checked the same way by `.ci/footprint/Sources/FootprintCore/main.swift`.
import Covenant
import Testing

@Suite struct DispatchReexportTests {
  @Test func dispatchTypesNeedNoImportOfTheirOwn() throws {
    let queue = DispatchQueue(label: "DispatchReexportTests")
    let interval: DispatchTimeInterval = .milliseconds(1)
    let done = DispatchSemaphore(value: 0)
    let future = queue.coroutineFuture { () throws -> Int in
      try Coroutine.delay(interval)
      return 7
    }
    future.whenComplete { _ in done.signal() }
    #expect(done.wait(timeout: .now() + 10) == .success)
    #expect(try future.result?.get() == 7)
  }
}
