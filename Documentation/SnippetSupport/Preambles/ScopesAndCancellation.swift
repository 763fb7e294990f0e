// ScopesAndCancellation.md's snippets: a view model's API.
import Covenant
import Foundation

struct Profile: Sendable { var name = "Ada" }

struct API: Sendable {
  func profile() -> CoFuture<Profile> { CoFuture(result: .success(Profile())) }
  func avatar() -> CoFuture<Image> { CoFuture(result: .success(Image())) }
}
let api = API()
let updates = CoChannel<Profile>()

extension ProfileViewModel {
  func show(_ profile: Profile) {}
  func showAvatar(_ image: Image) {}
}

let scope = CoScope()
let chunks = [Data(), Data()]
func process(_ chunk: Data) {}

struct Metrics: Sendable { func count(_ name: String) {} }
let metrics = Metrics()
