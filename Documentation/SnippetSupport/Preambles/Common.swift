// Declarations that documentation snippets use without showing them. Compiled into every
// Markdown file's snippet module (check_snippets.py); a file's own preamble adds more.
import Covenant
import Foundation

struct User: Codable, Sendable {
  var id = 1
  var name = "Ada"
  var avatarData = Data()
  var avatarURL = URL(fileURLWithPath: "/tmp/avatar.png")
}

struct Image: Sendable {
  var data = Data()
  static let placeholder = Image()
  func resized(to side: Int) -> Image { self }
}

struct Settings: Sendable { var theme = "dark" }

/// A stand-in for a UI object that snippets update "on the main queue".
final class ImageView: @unchecked Sendable { var image: Image? }
final class Label: @unchecked Sendable { var text = "" }
final class Spinner: Sendable { func stop() {} }

let imageView = ImageView()
let label = Label()
let spinner = Spinner()

func decodeImage(_ data: Data) throws -> Image { Image(data: data) }
func show(_ image: Image) {}
func report(_ error: any Error) {}
func log(_ error: any Error) {}

/// An async client (the Swift concurrency side of the bridges).
struct Client: Sendable {
  func user(id: Int) async throws -> User { User(id: id) }
}
let client = Client()
