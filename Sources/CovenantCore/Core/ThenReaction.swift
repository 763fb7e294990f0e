import Dispatch

/// `then`'s value and `Void` forms: the block runs with the value (a rejection skips it and is
/// passed on), and `derived` gets the block's result (`map`) or the value itself
/// (`passThrough`, where `Derived` is `Source`).
///
/// Its fields are the derived promise and plain closures of the generic parameters only:
/// nothing in its layout or deinitialization needs generic metadata (a closure type that
/// mentions `Result` or another generic type does, which is why the other steps live in
/// `TransformReaction`). No `Result` is built either.
@usableFromInline
// `@unchecked Sendable` (restated from `Reaction`): immutable fields, set before the step is
// registered; the step runs once, on its queue.
final class ThenReaction<Source, Derived>: QueuedReaction, @unchecked Sendable {
  @usableFromInline let derived: Promise<Derived>
  @usableFromInline let map: ((Source) throws -> Derived)?
  @usableFromInline let passThrough: ((Source) throws -> Void)?
  /// `performStep`, compiled where `then` was called: there the types are known, so loading the
  /// value and resolving `derived` are specialized (in this module's unspecialized `runStep`
  /// they would go through value-witness calls on every step: see the Performance article,
  /// "Design choices and what they save"). A closure
  /// that captures nothing: no allocation (unless the caller is itself unspecialized).
  @usableFromInline let specializedStep: (QueuedReaction, UnsafePointer<ResolutionCell>) -> Void

  @inlinable init(
    queue: DispatchQueue, derived: Promise<Derived>, map: ((Source) throws -> Derived)? = nil,
    passThrough: ((Source) throws -> Void)? = nil
  ) {
    assert((map == nil) != (passThrough == nil), "a `then` step maps or passes its value through")
    self.derived = derived
    self.map = map
    self.passThrough = passThrough
    specializedStep = { reaction, cell in
      unsafeDowncast(reaction, to: ThenReaction<Source, Derived>.self).performStep(cell)
    }
    super.init(queue: queue)
  }

  override func runStep(_ cell: UnsafePointer<ResolutionCell>) { specializedStep(self, cell) }

  @inlinable final func performStep(_ cell: UnsafePointer<ResolutionCell>) {
    guard cell.pointee.currentStatus == CellStatus.fulfilled else {
      derived.reject(cell.pointee.loadError())
      return
    }
    let value = cell.pointee.loadValue(as: Source.self)
    do {
      if let map {
        derived.fulfillReturned(try map(value))
      } else if let passThrough {
        try passThrough(value)
        assert(Derived.self == Source.self, "a pass-through step derives its source's type")
        derived.fulfill(unsafeBitCast(value, to: Derived.self))
      }
    } catch {
      derived.reject(error)
    }
  }
}
