// Coroutines.md's snippets: a promise-based API and a callback API.
import Covenant
import Foundation

func fetchA() -> Promise<Int> { Promise(1) }
func expensive(_ x: Int) -> Int { x * 2 }

enum LegacyAPI {
  static func compute(_ x: Int, completion: @escaping @Sendable (Int) -> Void) { completion(x + 1) }
}
let legacyAPI = LegacyAPI.self

/// Stands in for NSManagedObjectContext: runs blocks on its own serial queue.
final class ManagedContext: @unchecked Sendable {
  private let queue = DispatchQueue(label: "context")
  func perform(_ block: @escaping () -> Void) {
    nonisolated(unsafe) let block = block
    queue.async { block() }
  }
}
