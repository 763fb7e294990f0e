// Promises.md's snippets: a promise-based API.
import Covenant
import Foundation

enum MyError: Error, Equatable { case invalid(Int) }

let id = 1
let promise = Promise<Int>(1)
let url = URL(fileURLWithPath: "/tmp/data")
let file = "/tmp/file"

func fetchUser(_ id: Int) -> Promise<User> { Promise(User(id: id)) }
func fetchAvatar(for user: User) -> Promise<Image> { Promise(Image()) }
func crc32(of path: String) throws -> UInt32 { 0 }

struct Cache: Sendable { func store(_ image: Image) {} }
let cache = Cache()

struct Session: Sendable {
  func load(_ url: URL, completion: @escaping @Sendable (Data?, (any Error)?) -> Void) {
    completion(Data(), nil)
  }
}
let session = Session()

struct API: Sendable {
  func user(_ id: Int) -> Promise<User> { Promise(User(id: id)) }
  func fetchUser(id: Int) -> Promise<User> { Promise(User(id: id)) }
}
let api = API()
