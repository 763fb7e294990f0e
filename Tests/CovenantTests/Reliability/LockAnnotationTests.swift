import CCoroutineContext
import XCTest

/// Covenant's locks are visible to ThreadSanitizer only through the annotations compiled in
/// when the C target is built with TSan (Mutex+Annotated.swift). If a build ever ran under TSan
/// without them (say SwiftPM stopped passing the sanitizer flag to C targets), every contended
/// hand-over would be a race report again: fail here, with the reason, instead.
final class LockAnnotationTests: XCTestCase {
  func testLockAnnotationsAreOnExactlyUnderThreadSanitizer() {
    XCTAssertEqual(
      cov_sync_annotations_enabled != 0, TestScale.runsUnderThreadSanitizer,
      "the C target and the process disagree about ThreadSanitizer")
  }
}
