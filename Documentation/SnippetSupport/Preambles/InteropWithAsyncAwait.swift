// InteropWithAsyncAwait.md's snippets: a promise-based API and an async function.
import Covenant
import Foundation

struct Profile: Sendable { var name = "Ada" }

struct API: Sendable {
  func fetchUser(id: Int) -> Promise<User> { Promise(User(id: id)) }
  func fetchProfile(of user: User) -> Promise<Profile> { Promise(Profile()) }
}
let api = API()

enum Event: Sendable { case tap }
let events = CoChannel<Event>()
func handle(_ event: Event) {}

func work() async -> Int { 42 }
