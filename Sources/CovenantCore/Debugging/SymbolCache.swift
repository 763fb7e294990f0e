import CCoroutineContext

/// Symbolicates return addresses for a snapshot, each distinct address once: the image's symbol
/// tables (`cov_symbolicate`) and the Swift runtime's demangler.
final class SymbolCache {
  private var frames: [UInt: CoroutineInfo.Frame] = [:]
  private var buffer = [CChar](repeating: 0, count: 4096)

  /// The frame of return address `address`. The symbol is looked up one byte earlier, inside
  /// the call instruction: a call that ends a function returns past its end.
  func frame(_ address: UInt) -> CoroutineInfo.Frame {
    if let known = frames[address] { return known }
    var name: UnsafePointer<CChar>?
    var offset: UInt = 0
    var image: UnsafePointer<CChar>?
    cov_symbolicate(address &- 1, &name, &offset, &image)
    let module = name.flatMap { Self.swiftModule(ofMangledName: String(cString: $0)) }
    let symbol = name.map { mangled -> String in
      let demangled = buffer.withUnsafeMutableBufferPointer { buffer -> String? in
        guard cov_demangle(mangled, buffer.baseAddress, buffer.count) != 0 else { return nil }
        return String(cString: buffer.baseAddress!)
      }
      return demangled ?? String(cString: mangled)
    }
    let frame = CoroutineInfo.Frame(
      address: address, symbol: symbol, offset: name == nil ? 0 : offset + 1,
      image: image.map { path in
        let full = String(cString: path)
        return full.split(separator: "/").last.map(String.init) ?? full
      }, module: module)
    frames[address] = frame
    return frame
  }

  /// The module of a Swift symbol: the first identifier of its mangling (`$s12CovenantCore…`,
  /// `_$s…` on Apple platforms), or the standard library's own substitutions for its module and
  /// types (`$ss6Result…`, `$sSa…` for `Array`: `Swift`; `$sSc…`: `_Concurrency`; `$sSo…`:
  /// `__C`, imported C types); `nil` for other symbols. Word substitutions never occur in the
  /// first identifier, so its length and characters are literal.
  static func swiftModule(ofMangledName name: String) -> String? {
    var rest = Substring(name)
    for prefix in ["_$s", "$s", "_$S", "$S"] where rest.hasPrefix(prefix) {
      rest = rest.dropFirst(prefix.count)
      if rest.hasPrefix("s") { return "Swift" }
      if rest.hasPrefix("S"), let kind = rest.dropFirst().first, kind.isLetter {
        return kind == "c" ? "_Concurrency" : kind == "o" ? "__C" : "Swift"
      }
      let digits = rest.prefix { $0.isASCII && $0.isNumber }
      guard let length = Int(digits), length > 0 else { return nil }
      let identifier = rest.dropFirst(digits.count).prefix(length)
      return identifier.count == length ? String(identifier) : nil
    }
    return nil
  }
}
