import CCoroutineContext
import Covenant
import CovenantTesting
import Foundation
import XCTest

/// The limits and rules of stacks (the Coroutines article, "Stacks"): the copy limit of shared
/// stacks, pointers into a suspended coroutine's frames, and running out of memory mappings.
/// What ends the process runs in a child copy of this test binary.
final class StackLimitTests: XCTestCase {
  private static let childVariable = "COVENANT_STACK_LIMIT_CHILD"

  private var childMode: String? { ProcessInfo.processInfo.environment[Self.childVariable] }

  // MARK: The copy limit

  func testSuspendingDeeperThanTheCopyLimitStopsWithAMessage() throws {
    let child = try ChildProcess.run(
      test: "StackLimitTests/testChildSuspendsTooDeep", variable: Self.childVariable, value: "deep")
    XCTAssertNotEqual(child.status, 0, child.stderr)
    XCTAssertTrue(
      child.stderr.contains("Covenant: a coroutine suspended with ")
        && child.stderr.contains("more than the copy limit (4096 bytes)")
        && child.stderr.contains("stackMode: .dedicated"),
      child.stderr)
  }

  func testChildSuspendsTooDeep() throws {
    guard childMode == "deep" else { return }  // only in the child process spawned above
    Coroutine.sharedStackCopyLimit = 4_096
    DispatchQueue(label: "deep").startCoroutine {
      // Over 8 KiB in use: stops at the suspension, before anything is copied.
      _ = try awaitBelowFrames(64, Promise<Int>())
      XCTFail("resumed")
    }
    Thread.sleep(forTimeInterval: 10)
    XCTFail("the child should have stopped")
  }

  func testDedicatedStacksHaveNoCopyLimit() throws {
    let original = Coroutine.sharedStackCopyLimit
    Coroutine.sharedStackCopyLimit = 4_096
    defer { Coroutine.sharedStackCopyLimit = original }
    let promise = Promise<Int>()
    let future = DispatchQueue(label: "deep.dedicated").coroutineFuture(stackMode: .dedicated) {
      try awaitBelowFrames(64, promise)
    }
    promise.fulfill(41)
    XCTAssertEqual(try wait(for: future), 41 + 64)
  }

  // MARK: Pointers into a suspended coroutine's frames

  /// Debug builds copy a shared-stack coroutine out at every suspension and fill what it left
  /// with 0xCD; ASan builds poison it. A pointer into its frames, used while it is suspended,
  /// then reads the pattern or is reported. Release builds neither fill nor poison (the rule is
  /// documented there, not enforced).
  func testUsingAPointerIntoSuspendedFramesIsCaught() throws {
    if TestScale.runsUnderAddressSanitizer {
      // Without ASan's fake stacks (detect_stack_use_after_return, on by default here), which
      // keep address-taken locals off the real stack, in frames no other coroutine shares.
      let options = ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map { $0 + ":" } ?? ""
      let child = try ChildProcess.run(
        test: "StackLimitTests/testChildReadsSuspendedFrames", variable: Self.childVariable,
        value: "pointer",
        extra: ["ASAN_OPTIONS": options + "detect_stack_use_after_return=0:detect_leaks=0"])
      XCTAssertNotEqual(child.status, 0, child.stderr)
      XCTAssertTrue(child.stderr.contains("use-after-poison"), child.stderr)
      return
    }
    try XCTSkipIf(
      cov_shared_stacks_eager_eviction() == 0,
      "release build: vacated frames are neither filled nor poisoned")
    let (address, promise) = suspendWithEscapedPointer()
    XCTAssertEqual(address.load(as: UInt64.self), 0xCDCD_CDCD_CDCD_CDCD)
    promise.fulfill(0)
  }

  func testChildReadsSuspendedFrames() throws {
    guard childMode == "pointer" else { return }
    let (address, _) = suspendWithEscapedPointer()
    // Through memcpy, which ASan checks in every build (an unoptimized Swift load would run
    // uninstrumented standard-library code). ASan stops the process here.
    var value: UInt64 = 0
    memcpy(&value, address, MemoryLayout<UInt64>.size)
    XCTFail("no report: read \(value)")
  }

  /// Starts a coroutine that publishes the address of one of its locals and suspends.
  private func suspendWithEscapedPointer() -> (UnsafeRawPointer, Promise<Int>) {
    let promise = Promise<Int>()
    let escaped = Box<UInt>(0)
    let suspended = DispatchSemaphore(value: 0)
    let queue = DispatchQueue(label: "escape")
    queue.startCoroutine(stackMode: .shared) {
      var local: UInt64 = 0x1234_5678
      try withUnsafeMutablePointer(to: &local) { pointer in
        escaped.value = UInt(bitPattern: pointer)  // the misuse: it outlives the suspension
        suspended.signal()
        _ = try promise.await()
      }
    }
    suspended.wait()
    queue.sync {}  // the coroutine has switched out (and, when eager, been copied out)
    return (UnsafeRawPointer(bitPattern: escaped.value)!, promise)
  }

  // MARK: Memory mappings

  func testRunningOutOfMappingsThrowsCoroutineStartError() throws {
    // A lowered vm.max_map_count stands in for a process near the real one: dedicated stacks
    // stop with a CoroutineStartError, leaving the reserve to malloc; shared ones need none.
    // The reserve below the limit is an eighth of it, at least 1,024: room for 40 more.
    let inUse = cov_stack_mappings_in_use()
    let lowered = inUse + 40 + 1_024
    cov_stack_set_max_map_count(lowered)
    defer { cov_stack_set_max_map_count(0) }
    let queue = DispatchQueue(label: "mappings")
    let gate = Promise<Int>()
    var futures: [CoFuture<Int>] = []
    var failure: CoroutineStartError?
    for _ in 0..<400 {
      let future = queue.coroutineFuture(stackSize: 40_960) { try gate.await() }
      futures.append(future)
      queue.sync {}
      if case .failure(let error as CoroutineStartError)? = future.result {
        failure = error
        break
      }
    }
    let error = try XCTUnwrap(failure, "400 dedicated stacks fitted in a budget of 40 mappings")
    XCTAssertLessThanOrEqual(futures.count, 41)
    XCTAssertEqual(error.stackSize, 40_960)
    XCTAssertTrue(error.description.contains("vm.max_map_count"), error.description)
    // Shared-stack coroutines keep starting once their scheduler has a stack: made here
    // under the real limit, the group grows no further under the lowered one and shares it.
    let shared = DispatchQueue(label: "mappings.shared")
    cov_stack_set_max_map_count(0)
    XCTAssertEqual(try wait(for: shared.coroutineFuture { 1 }), 1)
    cov_stack_set_max_map_count(lowered)
    let many = (0..<1_000).map { i in shared.coroutineFuture { try gate.await() + i } }
    gate.fulfill(0)
    XCTAssertEqual(try many.map { try wait(for: $0) }, Array(0..<1_000))
    for future in futures.dropLast() { XCTAssertEqual(try wait(for: future), 0) }
  }
}

/// Awaits `promise` below `levels` frames of at least 128 bytes each (a fixed-size local, kept
/// on the stack); returns its value plus `levels`.
@inline(never)
func awaitBelowFrames(_ levels: Int, _ promise: Promise<Int>) throws -> Int {
  var frame = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
  withUnsafeMutablePointer(to: &frame) { touchFrame(UnsafeMutableRawPointer($0)) }
  if levels == 0 { return try promise.await() }
  return try awaitBelowFrames(levels - 1, promise) + frame.0
}

@inline(never)
private func touchFrame(_ pointer: UnsafeMutableRawPointer) {
  pointer.storeBytes(of: 1, as: Int.self)
}
