// MigratingFromGooglePromises.md's snippets: a small promise-based API.
import Covenant
import Foundation

enum MyError: Error { case failed(Int) }

let promise = Promise(42)

func fetchCount(completion: @escaping @Sendable (Int, (any Error)?) -> Void) { completion(3, nil) }
func fetchUser() -> Promise<User> { Promise(User()) }
func fetchSettings() -> Promise<Settings> { Promise(Settings()) }
func apply(_ settings: Settings, to user: User) {}
func legacyFetch(completion: @escaping @Sendable (Data, (any Error)?) -> Void) {
  completion(Data(), nil)
}
