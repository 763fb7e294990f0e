// TestingWithCovenantTesting.md's snippets: the model under test.
import Covenant
import Foundation

struct Profile: Sendable { var name = "Ada" }

struct Model: Sendable {
  func loadProfile() -> Promise<Profile> { Promise(Profile()) }
  func refresh() -> CoFuture<[Int]> { CoFuture(result: .success([1, 2, 3])) }
}
let model = Model()

/// A dependency that fails `failures` times, then answers "up".
final class FlakyService: @unchecked Sendable {
  private let lock = NSLock()
  private var failuresLeft: Int
  private var count = 0
  init(failures: Int) { failuresLeft = failures }
  struct Down: Error {}
  func call() throws -> String {
    try lock.withLock {
      count += 1
      guard failuresLeft == 0 else {
        failuresLeft -= 1
        throw Down()
      }
      return "up"
    }
  }
  var calls: Int { lock.withLock { count } }
}
