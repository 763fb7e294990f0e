/// Who holds a `CoMutex`: the holding coroutine's address, or `outsideCoroutines` for code that
/// locked it outside any coroutine.
enum PermitHolder {
  static let outsideCoroutines: UInt = 1

  static func coroutine(_ coroutine: CoroutineContext) -> UInt {
    UInt(bitPattern: Unmanaged.passUnretained(coroutine).toOpaque())
  }

  /// The holder the calling code would be.
  static var current: UInt {
    CoroutineContext.currentUnmanaged.map { UInt(bitPattern: $0.toOpaque()) } ?? outsideCoroutines
  }
}
