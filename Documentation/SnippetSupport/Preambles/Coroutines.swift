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

/// A cache slot for the CoMutex snippet; counts how often it was filled. (Only touched under
/// the snippet's `CoMutex`, so it needs no lock of its own.)
final class CacheBox: @unchecked Sendable {
  private(set) var fetches = 0
  var value: Int? {
    didSet { fetches += 1 }
  }
}

/// How many are inside at once, at most: for the CoSemaphore snippet.
final class PeakCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var inside = 0
  private var most = 0
  func enter() {
    lock.withLock {
      inside += 1
      most = max(most, inside)
    }
  }
  func leave() { lock.withLock { inside -= 1 } }
  var peak: Int { lock.withLock { most } }
}
