// Covenant.md's (the landing page's) snippet: a promise-based API.
import Covenant

struct API: Sendable {
  func fetchUser(id: Int) -> Promise<User> { Promise(User(id: id)) }
}
let api = API()
