// What the specs take from elsewhere than coswift: QuartzCore's clock (not on Linux), and the
// seconds of the `waitUntil(timeout:)` of the Nimble they were written for (Nimble 13 takes a
// `NimbleTimeInterval`).
import Foundation
import Nimble

func CACurrentMediaTime() -> Double { ProcessInfo.processInfo.systemUptime }

func waitUntil(
  timeout: TimeInterval, fileID: String = #fileID, file: FileString = #filePath,
  line: UInt = #line, column: UInt = #column,
  action: @escaping (@escaping () -> Void) -> Void
) {
  Nimble.waitUntil(
    timeout: .milliseconds(Int(timeout * 1000)), fileID: fileID, file: file, line: line,
    column: column, action: action)
}
