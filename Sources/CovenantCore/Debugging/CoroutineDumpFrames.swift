/// How a dump shows a backtrace: compiler-made glue left out, the copies an optimizer makes of a
/// function shown as the function, and Covenant's own frames at either end folded into one line
/// each, so that what is left is the program's own code, and alike coroutines show, and group
/// by, the same lines.
enum CoroutineDumpFrames {
  /// The lines of `frames` (innermost first).
  static func lines(_ frames: [CoroutineInfo.Frame]) -> [String] {
    var shown: [CoroutineInfo.Frame] = []
    for frame in frames where !isThunk(frame, after: shown.last) { shown.append(frame) }
    guard !shown.isEmpty else { return [] }
    let leading = foldedCount(shown)
    let trailing = foldedCount(shown.dropFirst(leading).reversed())
    var lines: [String] = []
    if leading > 0 { lines.append("… \(leading) frame\(leading == 1 ? "" : "s") in Covenant") }
    lines += shown.dropFirst(leading).dropLast(trailing).map(text)
    if trailing > 0 { lines.append("… \(trailing) frame\(trailing == 1 ? "" : "s") in Covenant") }
    return lines
  }

  /// A frame's line: its description, without the suffix of a copy (see `withoutCopySuffix`).
  private static func text(_ frame: CoroutineInfo.Frame) -> String {
    guard let symbol = frame.symbol, symbol.contains(copyMarker) else { return frame.description }
    let place = frame.image.map { " (\($0))" } ?? ""
    return "\(withoutCopySuffix(symbol)) + \(frame.offset)\(place)"
  }

  private static let copyMarker = " with unmangled suffix \""

  /// `symbol` without the ` with unmangled suffix ".9"` the demangler adds to the copies of a
  /// function that an optimized build may make (one per place a closure's context is made, in
  /// an unrolled loop for instance): the same code, which a reader, and grouping, should see as
  /// one function.
  static func withoutCopySuffix(_ symbol: String) -> String {
    let marker = Array(copyMarker.utf8)
    let bytes = Array(symbol.utf8)
    guard bytes.count > marker.count else { return symbol }
    for start in stride(from: bytes.count - marker.count, through: 0, by: -1)
    where bytes[start..<start + marker.count].elementsEqual(marker) {
      let quote = UInt8(ascii: "\"")
      guard let end = bytes[(start + marker.count)...].firstIndex(of: quote) else { break }
      return String(decoding: bytes[..<start] + bytes[(end + 1)...], as: UTF8.self)
    }
    return symbol
  }

  /// Glue the compiler makes between a closure and its caller, which says nothing to a reader:
  /// reabstraction thunks, and a closure's forwarder right after the closure itself or after
  /// another copy of the same forwarder (alone, in an optimized build, the forwarder is where
  /// the closure's code went: it stays).
  static func isThunk(_ frame: CoroutineInfo.Frame, after inner: CoroutineInfo.Frame?) -> Bool {
    guard let full = frame.symbol else { return false }
    var symbol = withoutCopySuffix(full)[...]
    let forwarder = "partial apply forwarder for "
    let isForwarder = symbol.hasPrefix(forwarder)
    if isForwarder { symbol = symbol.dropFirst(forwarder.count) }
    if symbol.hasPrefix("reabstraction thunk") || symbol.hasPrefix("thunk for")
      || symbol.hasPrefix("@objc ")
    {
      return true
    }
    guard isForwarder, let innerSymbol = inner?.symbol.map(withoutCopySuffix) else { return false }
    return innerSymbol[...] == symbol || innerSymbol == forwarder + symbol
  }

  /// How many frames to fold at the start of `frames` (one end of a backtrace): those up to the
  /// last of Covenant's before the first of the program's. The standard library's frames in
  /// between fold with them: Covenant's code calls it (`Result(catching:)`, `withExtendedLifetime`
  /// and the like), and a debug build, which inlines none of it, shows those frames amid
  /// Covenant's own.
  private static func foldedCount(_ frames: some Sequence<CoroutineInfo.Frame>) -> Int {
    var folded = 0
    for (index, frame) in frames.enumerated() {
      if isLibrary(frame) {
        folded = index + 1
      } else if !isStandardLibrary(frame) {
        break
      }
    }
    return folded
  }

  /// Covenant's own frames: the switch and the fiber's entry (C), the await machinery (Swift:
  /// functions of the CovenantCore module, their specializations, and members of its extensions
  /// of other modules' types, such as `DispatchQueue`'s).
  static func isLibrary(_ frame: CoroutineInfo.Frame) -> Bool {
    if frame.module == "CovenantCore" { return true }
    guard let symbol = frame.symbol else { return false }
    if frame.module == nil { return symbol.hasPrefix("cov_") || symbol == "fiber_main" }
    return symbol.contains("(extension in CovenantCore):")
  }

  /// Frames of Swift's standard library and concurrency runtime.
  static func isStandardLibrary(_ frame: CoroutineInfo.Frame) -> Bool {
    frame.module == "Swift" || frame.module == "_Concurrency"
  }
}
