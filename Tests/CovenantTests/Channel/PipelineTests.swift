import Covenant
import Dispatch
import XCTest

/// A log-processing pipeline written the way the docs describe it: a producer, four workers on
/// a concurrent queue, two bounded channels, a collector selecting over results, progress ticks
/// and a stop channel, all in one scope that a fatal line, a stop or a deadline cancels, then
/// joined.
final class PipelineTests: XCTestCase {
  private struct FatalLine: Error, Equatable { let line: String }

  private struct Report: Equatable {
    var sum = 0
    var results = 0
    var ticks = 0
    var ending = ""
  }

  /// The pipeline over `lines` (produced forever if `nil`; the input is closed after them
  /// unless `closesInput` is false): returns the scope, the report the collector fills in, and
  /// the failures its handler saw.
  private func startPipeline(
    lines: [String]?, closesInput: Bool = true, stop: CoChannel<Void>
  ) -> (
    scope: CoScope, report: Locked<Report>, failures: Locked<[String]>, workersDone: Locked<Int>
  ) {
    let scope = CoScope()
    let failures = Locked([String]())
    scope.uncaughtErrorHandler = { failure in
      failures.withLock { $0.append("\(failure.error)") }
      scope.cancel()  // one fatal line stops everything
    }
    let input = CoChannel<String>(capacity: 16).added(to: scope)
    let results = CoChannel<Int>(capacity: 8).added(to: scope)
    let ticks = CoChannel<Int>(bufferType: .conflated).added(to: scope)
    let workers = DispatchQueue(label: "pipeline.workers", attributes: .concurrent)
    let report = Locked(Report())
    let workersDone = Locked(0)

    // Producer.
    DispatchQueue.global().startCoroutine(in: scope) {
      if let lines {
        for line in lines { try input.awaitSend(line) }
      } else {
        var index = 0
        while true {
          try input.awaitSend("\(index % 10)")
          index += 1
        }
      }
      if closesInput { input.close() } else { try CoPromise<Void>().await() }
    }
    // Workers: throwing iteration, so a cancel is not mistaken for the end of the input.
    for _ in 0..<4 {
      workers.startCoroutine(in: scope) {
        while let line = try input.values.next() {
          guard let value = Int(line) else { throw FatalLine(line: line) }
          try results.awaitSend(value)
        }
        // The input is finished: the last worker to see it closes the results.
        let last = workersDone.withLock { done -> Bool in
          done += 1
          return done == 4
        }
        if last { results.close() }
      }
    }
    // Ticker.
    DispatchQueue.global().startCoroutine(in: scope) {
      var tick = 0
      while true {
        ticks.offer(tick)
        tick += 1
        try Coroutine.delay(.milliseconds(1))
      }
    }
    // Collector: fair among results, ticks and stop; a closed results channel is left out.
    DispatchQueue.global().startCoroutine(in: scope) {
      var open: CoChannel<Int>? = results
      var collected = Report()
      defer { report.withLock { $0 = collected } }
      do {
        while open != nil {
          try CoChannel.selectUnbiased {
            $0.onReceiveResult(open) { result in
              switch result {
              case .success(let value):
                collected.sum += value
                collected.results += 1
              case .failure(let error):
                if error == .canceled { throw error }
                open = nil
              }
            }
            $0.onReceive(ticks) { _ in collected.ticks += 1 }
            $0.onReceive(stop) { open = nil }
          }
        }
        collected.ending = "finished"
      } catch {
        collected.ending = "cancelled"
        throw error
      }
    }
    return (scope, report, failures, workersDone)
  }

  func testAllLinesFlowThrough() throws {
    let lines = (0..<2_000).map { "\($0 % 10)" }
    let stop = CoChannel<Void>(bufferType: .none)
    let (scope, report, failures, workersDone) = startPipeline(lines: lines, stop: stop)
    // Wait for the collector to finish, then stop the ticker with the rest.
    let deadline = DispatchTime.now() + 30
    while report.withLock({ $0.ending }).isEmpty, DispatchTime.now() < deadline { usleep(1_000) }
    try scope.cancelAndJoin()
    let final = report.withLock { $0 }
    XCTAssertEqual(final.ending, "finished")
    XCTAssertEqual(final.results, 2_000)
    XCTAssertEqual(final.sum, lines.compactMap { Int($0) }.reduce(0, +))
    XCTAssertEqual(workersDone.withLock { $0 }, 4)
    XCTAssertEqual(failures.withLock { $0 }, [])
  }

  func testAFatalLineCancelsEverythingAndJoinWaitsForAll() throws {
    var lines = (0..<5_000).map { "\($0 % 10)" }
    lines[1_500] = "garbage"
    let stop = CoChannel<Void>(bufferType: .none)
    // The input is never closed: the workers can end only by the cancel, which they must see
    // as one (with the plain iterator they would end as if the input were finished).
    let (scope, report, failures, workersDone) = startPipeline(
      lines: lines, closesInput: false, stop: stop)
    // Nobody cancels from outside: the worker's uncaught error does, through the handler.
    let deadline = DispatchTime.now() + 30
    while !scope.isCanceled, DispatchTime.now() < deadline { usleep(1_000) }
    try scope.join()
    XCTAssertTrue(scope.isCanceled)
    XCTAssertEqual(failures.withLock { $0 }, ["\(FatalLine(line: "garbage"))"])
    XCTAssertEqual(report.withLock { $0.ending }, "cancelled", "the collector saw the cancel")
    XCTAssertLessThan(report.withLock { $0.results }, 5_000)
    XCTAssertEqual(workersDone.withLock { $0 }, 0, "no worker reported a cancel as the end")
  }

  func testStopAndDeadline() throws {
    // An endless producer: the collector ends on `stop`, the rest on a deadline.
    let stop = CoChannel<Void>(bufferType: .none)
    let (scope, report, failures, _) = startPipeline(lines: nil, stop: stop)
    let stopper = DispatchQueue(label: "stopper")
    stopper.asyncAfter(deadline: .now() + 0.05) {
      stopper.startCoroutine { try stop.awaitSend(()) }
    }
    let deadline = DispatchTime.now() + 30
    while report.withLock({ $0.ending }).isEmpty, DispatchTime.now() < deadline { usleep(1_000) }
    try scope.cancelAndJoin()  // the deadline: everything else is still running
    let final = report.withLock { $0 }
    XCTAssertEqual(final.ending, "finished")
    XCTAssertGreaterThan(final.results, 0)
    XCTAssertGreaterThan(final.ticks, 0, "ticks were not starved by the busy results")
    XCTAssertEqual(failures.withLock { $0 }, [])
  }
}
