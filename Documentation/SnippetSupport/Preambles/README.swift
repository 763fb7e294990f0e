// README.md's snippets: a promise-based API and a few helpers.
import Covenant
import Foundation

struct API: Sendable {
  func fetchUser(id: Int) -> Promise<User> { Promise(User(id: id)) }
  func avatar(for user: User) -> Promise<Image> { Promise(Image()) }
  func ping() -> Promise<Void> { Promise(()) }
  func slowCall() -> Promise<Int> { Promise(1) }
}
let api = API()
let url = URL(fileURLWithPath: "/tmp/user.json")

func fetchUser() -> Promise<User> { Promise(User()) }
func fetchSettings() -> Promise<Settings> { Promise(Settings()) }
func fetchA() -> Promise<Int> { Promise(1) }
func expensive(_ x: Int) -> Int { x * 2 }

enum LegacyAPI {
  static func compute(_ x: Int, completion: @escaping @Sendable (Int) -> Void) { completion(x + 1) }
}
let legacyAPI = LegacyAPI.self

enum CounterMessage {
  case increment
  case get(CoPromise<Int>)
}
