import Foundation
import XCTest

/// What the system-layer tests read in `/proc` (Linux) to check threads, memory and processes
/// from the outside.
enum ProcInspector {
  /// How many threads of this process are named `name` (`/proc/self/task/*/comm`).
  static func threads(named name: String) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
      let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
      return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
    }.count
  }

  /// This process's resident memory in KiB (`VmRSS` of `/proc/self/status`).
  static var residentKiB: Int { statusField("VmRSS", of: "self") ?? 0 }

  /// A field of `/proc/<pid>/status` in KiB (or its number), `nil` if the process is gone.
  static func statusField(_ field: String, of pid: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
      return nil
    }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
      return Int(line.dropFirst(field.count + 1).split(separator: " ").first ?? "")
    }
    return nil
  }

  /// The state letter of process `pid` (`R`, `S`, `Z` for a zombie, …), `nil` once it is gone
  /// (reaped).
  static func state(of pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(close, offsetBy: 2)...].first
  }
}

/// A temporary directory for one test, removed with everything in it by `remove()`.
struct TemporaryDirectory {
  let path: String

  init() throws {
    path = NSTemporaryDirectory() + "covenant-system-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { path + "/" + name }

  func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A gate closures on pool threads wait at until the test opens it.
final class Gate: @unchecked Sendable {
  private let semaphore = DispatchSemaphore(value: 0)
  private let opened = Locked(false)

  func wait() {
    semaphore.wait()
    semaphore.signal()  // lets the next waiter through too
  }

  func open() {
    let first = opened.withLock { opened -> Bool in
      defer { opened = true }
      return !opened
    }
    if first { semaphore.signal() }
  }
}
