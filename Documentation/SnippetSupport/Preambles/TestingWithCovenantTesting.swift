// TestingWithCovenantTesting.md's snippets: the model under test.
import Covenant
import Foundation

struct Profile: Sendable { var name = "Ada" }

struct Model: Sendable {
  func loadProfile() -> Promise<Profile> { Promise(Profile()) }
  func refresh() -> CoFuture<[Int]> { CoFuture(result: .success([1, 2, 3])) }
}
let model = Model()
