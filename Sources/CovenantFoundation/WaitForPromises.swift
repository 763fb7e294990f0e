import CovenantCore
import Dispatch
import Foundation

/// Waits until `DispatchGroup.promises` is empty (no pending promise, no promise block queued or
/// running), running the current run loop in short slices meanwhile so that blocks dispatched
/// to the main queue can run while a test waits on the main thread.
///
/// - Returns: `true` when everything finished, `false` when `timeout` seconds passed first.
///   A negative timeout is treated as 0.
@discardableResult
public func waitForPromises(timeout: TimeInterval) -> Bool {
  let deadline = Date(timeIntervalSinceNow: max(0, timeout))
  let slice: TimeInterval = 0.01
  repeat {
    if DispatchGroup.promises.wait(timeout: .now()) == .success { return true }
    if Thread.isMainThread {
      _ = RunLoop.current.run(
        mode: .default, before: min(deadline, Date(timeIntervalSinceNow: slice)))
    } else {
      _ = DispatchGroup.promises.wait(
        timeout: .now() + min(slice, max(0, deadline.timeIntervalSinceNow)))
    }
  } while Date() < deadline
  return DispatchGroup.promises.wait(timeout: .now()) == .success
}
