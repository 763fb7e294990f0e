import Dispatch

extension DispatchGroup {
  /// The group that every pending promise and every dispatched promise block belongs to.
  ///
  /// A pending promise enters it when created and leaves when resolved or deallocated; each
  /// observer and work block is dispatched through it. `waitForPromises(timeout:)` waits for it
  /// to empty.
  public static let promises = DispatchGroup()
}
