import Covenant
import CovenantTesting
import Foundation
import XCTest

// Classic google/promises style, compiled in Swift 5 language mode: blocks capture and MUTATE
// local `var`s and use non-Sendable values. Blocks run on the default queue (`.main`), and
// `waitForPromises` runs the main run loop, so the mutations happen on the test's own thread.

private final class Account {  // deliberately not Sendable
  var balance = 0
  var log: [String] = []
}

private struct Oops: Error, Equatable { var code = 1 }

private func legacyLoad(_ id: Int, completion: @escaping (Account?, Error?) -> Void) {
  DispatchQueue.main.async {
    let account = Account()
    account.balance = id * 100
    completion(account, nil)
  }
}

private func legacyCount(completion: @escaping (Int) -> Void) { completion(3) }
private func legacySave(completion: @escaping (Error?) -> Void) { completion(Oops()) }
private func legacyDone(completion: @escaping () -> Void) { completion() }
private func legacyResult(completion: @escaping (Result<String, Error>) -> Void) {
  completion(.success("ok"))
}

final class ClassicOperatorsTests: XCTestCase {
  override func setUp() {
    super.setUp()
    DispatchQueue.promises = .main
  }

  override func tearDown() {
    XCTAssertTrue(waitForPromises(timeout: 2))
    super.tearDown()
  }

  func testChainMutatesLocals() {
    var steps: [String] = []
    var total = 0
    let account = Account()
    Promise<Int> { fulfill, _ in
      steps.append("work")
      fulfill(1)
    }.then { value -> Int in
      steps.append("then \(value)")
      total += value
      return value + 1
    }.then { value in
      steps.append("void \(value)")
      account.balance += value
      account.log.append("deposit")
    }.then { value -> Promise<Int> in
      total += value
      return Promise(value * 10)
    }.always {
      steps.append("always")
    }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(steps, ["work", "then 1", "void 2", "always"])
    XCTAssertEqual(total, 3)
    XCTAssertEqual(account.balance, 2)
    XCTAssertEqual(account.log, ["deposit"])
  }

  func testCatchAndRecoverMutateLocals() {
    var caught: Error?
    var recovered = 0
    var finished = false
    Promise<Int>(Oops(code: 7))
      .catch { error in caught = error }
      .recover { error -> Int in
        recovered += 1
        return (error as? Oops)?.code ?? 0
      }
      .then { value in recovered += value }
      .always { finished = true }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(caught as? Oops, Oops(code: 7))
    XCTAssertEqual(recovered, 8)
    XCTAssertTrue(finished)
  }

  func testNonSendableValuesFlowThrough() throws {
    let loaded = Promise<Account> { fulfill, _ in
      let account = Account()
      account.balance = 5
      fulfill(account)
    }
    var seen: Account?
    loaded.then { account in seen = account }
    XCTAssertEqual(try wait(for: loaded.then { $0.balance * 2 }), 10)
    XCTAssertTrue(seen === loaded.value)
  }

  func testValidateDelayTimeout() {
    var validated: [Int] = []
    var errors: [Error] = []
    Promise(5).validate { value in
      validated.append(value)
      return value > 10
    }.catch { errors.append($0) }
    Promise(1).delay(0.01).timeout(1).then { validated.append($0) }
    Promise<Int>().timeout(0.01).catch { errors.append($0) }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(validated, [5, 1])
    XCTAssertEqual(errors.count, 2)
    XCTAssertEqual(errors.first as? PromiseError, .validationFailure)
    XCTAssertEqual(errors.last as? PromiseError, .timedOut)
  }

  func testAllAnyRaceReduce() {
    var results: [String] = []
    all(Promise(1), Promise(2), Promise(3), Promise(4), Promise(5)).then { values in
      results.append("all \(values)")
    }
    all(Promise(1), Promise(2), Promise(3)).then { values in results.append("triple \(values)") }
    all(Promise(1), Promise("two")).then { number, text in results.append("pair \(number) \(text)")
    }
    any([Promise(1), Promise<Int>(Oops())]).then { outcomes in
      results.append("any \(outcomes.compactMap { $0.value })")
    }
    race(Promise<Int>(), Promise(9)).then { results.append("race \($0)") }
    Promise(0).reduce(1, 2, 3) { sum, next in
      results.append("step \(next)")
      return Promise(sum + next)
    }.then { results.append("reduced \($0)") }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(
      Set(results),
      [
        "all [1, 2, 3, 4, 5]", "triple (1, 2, 3)", "pair 1 two", "any [1]", "race 9", "step 1",
        "step 2", "step 3", "reduced 6",
      ])
  }

  func testWrapLegacyAPIs() {
    var balance = 0
    var count = 0
    var saveError: Error?
    var done = false
    var text = ""
    wrap { handler in legacyLoad(2, completion: handler) }.then { account in
      balance = account?.balance ?? -1
    }
    wrap { handler in legacyCount(completion: handler) }.then { count = $0 }
    wrap { handler in legacySave(completion: handler) }.catch { saveError = $0 }
    wrap { handler in legacyDone(completion: handler) }.then { done = true }
    wrap { handler in legacyResult(completion: handler) }.then { text = $0 }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(balance, 200)
    XCTAssertEqual(count, 3)
    XCTAssertEqual(saveError as? Oops, Oops())
    XCTAssertTrue(done)
    XCTAssertEqual(text, "ok")
  }

  func testRetryCountsInALocal() {
    var runs = 0
    var asked: [Int] = []
    let result = retry(
      attempts: 2, delay: 0.001,
      condition: { remaining, _ in
        asked.append(remaining)
        return true
      }
    ) { () -> Promise<Int> in
      runs += 1
      return runs < 3 ? Promise(Oops()) : Promise(runs)
    }
    XCTAssertTrue(waitForPromises(timeout: 2))
    XCTAssertEqual(result.value, 3)
    XCTAssertEqual(runs, 3)
    XCTAssertEqual(asked, [2, 1])
  }

  func testAwaitStyleWaitHelper() throws {
    var hits = 0
    let promise = Promise(20).then { value -> Int in
      hits += 1
      return value + 1
    }
    XCTAssertEqual(try wait(for: promise), 21)
    XCTAssertEqual(hits, 1)
  }
}
