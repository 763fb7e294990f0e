// GeneratorsAndActors.md's snippets: a tree, records and a database cursor.
import Covenant
import Foundation

final class Tree<T> {
  var value: T
  var left: Tree<T>?
  var right: Tree<T>?
  init(_ value: T, left: Tree<T>? = nil, right: Tree<T>? = nil) {
    self.value = value
    self.left = left
    self.right = right
  }
}

struct Record {
  var text: String
  init(parsing line: String) throws { text = line }
}
let lines = ["a", "b"]
func store(_ record: Record) {}

struct Row { var isError = false }
final class Cursor {
  func step() throws -> Row? { nil }
  func close() {}
}
enum Database { static func query(_ sql: String) throws -> Cursor { Cursor() } }
let database = Database.self
