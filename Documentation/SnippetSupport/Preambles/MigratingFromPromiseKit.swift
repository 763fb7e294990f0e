// MigratingFromPromiseKit.md's snippets: a promise-based API and a callback API.
import Covenant
import Foundation

enum MyError: Error { case failed }

struct Credentials: Sendable { var user = User() }
func login() -> Promise<Credentials> { Promise(Credentials()) }
func fetchAvatar(for user: User) -> Promise<Data> { Promise(Data()) }
func fetchUser() -> Promise<User> { Promise(User()) }
func fetchSettings() -> Promise<Settings> { Promise(Settings()) }
func apply(_ settings: Settings, to user: User) {}
func retryNow() {}

func compute(completion: @escaping @Sendable (Int?, (any Error)?) -> Void) { completion(1, nil) }

struct Mirror: Sendable {
  var delay: TimeInterval
  func get() -> Promise<Data> { Promise(Data([1, 2, 3])).delay(delay) }
}
let mirrorA = Mirror(delay: 0)
let mirrorB = Mirror(delay: 1)
func use(_ data: Data) {}
