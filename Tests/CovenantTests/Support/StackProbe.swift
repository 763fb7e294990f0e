import CCoroutineContext
import Covenant
import Dispatch
import Foundation

/// Measures the stack a piece of code uses, inside a coroutine whose stack is known: the part
/// of the stack below the caller's frame is painted with a pattern first, and the lowest word
/// no longer holding it afterwards is the high-water mark.
enum StackProbe {
  private static let pattern: UInt = 0xA5A5_A5A5_A5A5_A5A5

  /// Runs `body` in a new coroutine with a `stackSize`-byte stack (on its own queue) and
  /// returns the bytes of stack `body` used at its deepest, counted from the frame that
  /// called it. Overflowing the stack kills the process with the overflow diagnostic.
  ///
  /// Under a sanitizer nothing is measured (nil): AddressSanitizer may keep locals on a "fake
  /// stack" elsewhere, and the sanitizer runtimes' own frames below the painting code are
  /// larger than the margin it leaves. There the stack is also four times `stackSize`, for the
  /// instrumented frames.
  static func peakStackUse(stackSize: Int = 65_536, _ body: @escaping @Sendable () -> Void) -> Int?
  {
    let done = DispatchSemaphore(value: 0)
    let peak = Box<Int?>(nil)
    let size = TestScale.runsUnderSanitizer ? 4 * stackSize : stackSize
    DispatchQueue(label: "stack-probe").startCoroutine(stackSize: size) {
      peak.value = measure(body)
      done.signal()
    }
    done.wait()
    return peak.value
  }

  /// `peakStackUse` from inside the coroutine whose stack is measured.
  @inline(never)
  static func measure(_ body: () -> Void) -> Int? {
    let fiber = cov_fiber_current()!
    let base = UInt(bitPattern: cov_fiber_stack_base(fiber)!)
    let end = base + UInt(cov_fiber_stack_size(fiber))
    var anchor = 0
    return withUnsafeMutablePointer(to: &anchor) { anchor in
      let top = UInt(bitPattern: anchor)
      guard !TestScale.runsUnderSanitizer, top > base + 4_096, top < end else {
        body()
        return nil
      }
      paint(down: base)
      body()
      var lowest = base
      while lowest < top, UnsafePointer<UInt>(bitPattern: lowest)!.pointee == pattern {
        lowest += UInt(MemoryLayout<UInt>.stride)
      }
      return Int(top - lowest)
    }
  }

  /// Fills the stack from a little below this function's frame down to `base`.
  @inline(never)
  private static func paint(down base: UInt) {
    var local = 0
    withUnsafeMutablePointer(to: &local) { local in
      // Leaves room for this frame's own callees (the closure, `initialize`).
      let end = (UInt(bitPattern: local) - 1_024) & ~UInt(MemoryLayout<UInt>.stride - 1)
      guard end > base else { return }
      let words = Int(end - base) / MemoryLayout<UInt>.stride
      UnsafeMutablePointer<UInt>(bitPattern: base)!.initialize(repeating: pattern, count: words)
    }
  }
}
