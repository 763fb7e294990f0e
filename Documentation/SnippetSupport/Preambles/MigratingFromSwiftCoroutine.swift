// MigratingFromSwiftCoroutine.md's snippets: UIKit stand-ins for Linux.
import Covenant
import Foundation

let imageURL = URL(fileURLWithPath: "/tmp/image.png")

struct UIImage: Sendable {
  init?(data: Data) {}
  func makeThumbnail() -> UIImage { self }
}
final class ImageHolder: @unchecked Sendable { var image: UIImage? }
let thumbnailView = ImageHolder()
