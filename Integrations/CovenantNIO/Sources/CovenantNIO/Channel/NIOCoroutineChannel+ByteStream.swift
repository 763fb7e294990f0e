import CovenantCore
import NIOCore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension NIOCoroutineChannel where Inbound == ByteBuffer, Outbound == ByteBuffer {
  /// Inside a coroutine: the next line, without its terminator (LF or CRLF), decoded as UTF-8
  /// (invalid bytes become U+FFFD); `nil` at the end of input. A last line without a
  /// terminator is returned as it is.
  ///
  /// ```swift
  /// while let line = try connection.readLine(maxLength: 1024) {
  ///   try connection.write("\(line.count)\n")
  /// }
  /// ```
  ///
  /// A line held in one received buffer is decoded from it in place; one that spans several is
  /// gathered first.
  /// - Throws: `NIOCoroutineChannelError.lineTooLong` for a line longer than `maxLength` bytes
  ///   (terminator not counted). The line is never cut in two: it is skipped whole, what was
  ///   received now and the rest as it arrives, so the next read starts at the next line. Also
  ///   what `read()` throws.
  public func readLine(maxLength: Int = 65_536) throws -> String? {
    try onLoop { try $0.readLine(maxLength: maxLength, until: nil) }
  }

  /// Inside a coroutine: exactly the next `count` bytes, or `nil` at the end of input when
  /// nothing is left. When they sit in one received buffer the result is a slice of it (no
  /// copy).
  /// - Throws: `NIOCoroutineChannelError.unexpectedEndOfInput` when the input ends after some
  ///   but not all of them (those are dropped); what `read()` throws.
  /// - Precondition: `count >= 0`.
  public func read(exactly count: Int) throws -> ByteBuffer? {
    precondition(count >= 0, "read(exactly:) with a negative count")
    return try onLoop { try $0.read(exactly: count, until: nil) }
  }

  /// Inside a coroutine: the bytes up to the next `delimiter`, without it (the delimiter is
  /// consumed); `nil` at the end of input. A last frame without a delimiter is returned as it
  /// is. A frame held in one received buffer is returned as a slice of it (no copy).
  /// - Throws: `NIOCoroutineChannelError.frameTooLong` for a frame longer than `maxLength`
  ///   bytes, skipped whole up to and including its delimiter (as `readLine` skips a long
  ///   line); what `read()` throws.
  public func read(until delimiter: UInt8, maxLength: Int = 65_536) throws -> ByteBuffer? {
    try onLoop { try $0.read(until: delimiter, maxLength: maxLength, deadline: nil) }
  }
}

extension CoroutineChannelHandler where Inbound == ByteBuffer, Outbound == ByteBuffer {
  func readLine(maxLength: Int, until deadline: NIODeadline?) throws -> String? {
    // The common case first: the line in the first buffer, now or once something arrives.
    while skipThrough == nil {
      if !buffered.isEmpty {
        if let line = takeLineFromFirstBuffer(maxLength) { return line }
        break
      }
      guard case .open = input else { break }
      try waitForInput(until: deadline)
    }
    let tooLong = NIOCoroutineChannelError.lineTooLong(maxLength: maxLength)
    // The frame may hold a CR beyond `maxLength`: a CRLF line of `maxLength` bytes.
    let limit = maxLength < Int.max ? max(0, maxLength) + 1 : maxLength
    return try readFrame(
      delimiter: UInt8(ascii: "\n"), limit: limit, tooLong: tooLong, deadline: deadline
    ) { buffer, length in
      buffer.withUnsafeReadableBytes { bytes -> String? in
        var end = length
        if end > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end > maxLength { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
      }
    }
  }

  /// The next line when the first buffer holds all of it and it is not too long — the common
  /// case, in one pass over the borrowed buffer (no copy of it, no reference counting): the
  /// search from where the last one stopped, the `String`, the consumption. `nil` otherwise,
  /// and the general path decides.
  @inline(__always)
  private func takeLineFromFirstBuffer(_ maxLength: Int) -> String? {
    // The LF of a line of `maxLength` bytes ending in CRLF is at `maxLength + 1`.
    let reach = maxLength < Int.max - 1 ? max(0, maxLength) + 2 : Int.max
    let from = searchedBytes
    let taken = buffered.modifyFirst { buffer -> (line: String, consumed: Int, left: Int)? in
      let end = min(buffer.readableBytes, reach)
      guard from < end else { return nil }
      let found = buffer.withUnsafeReadableBytes { bytes -> (line: String, consumed: Int)? in
        let base = bytes.baseAddress.unsafelyUnwrapped
        guard let newline = memchr(base + from, Int32(UInt8(ascii: "\n")), end - from) else {
          return nil
        }
        let index = UnsafeRawPointer(newline) - UnsafeRawPointer(base)
        let length = index > 0 && bytes[index - 1] == UInt8(ascii: "\r") ? index - 1 : index
        if length > maxLength { return nil }
        let bytesOfLine = UnsafeRawBufferPointer(start: base, count: length)
        let line = String(decoding: bytesOfLine, as: UTF8.self)
        return (line, index + 1)
      }
      guard let found else { return nil }
      buffer.moveReaderIndex(forwardBy: found.consumed)
      return (found.line, found.consumed, buffer.readableBytes)
    }
    guard let taken else { return nil }
    afterTakingBytes(taken.consumed, left: taken.left)
    return taken.line
  }

  func read(until delimiter: UInt8, maxLength: Int, deadline: NIODeadline?) throws -> ByteBuffer? {
    let tooLong = NIOCoroutineChannelError.frameTooLong(maxLength: maxLength)
    return try readFrame(
      delimiter: delimiter, limit: max(0, maxLength), tooLong: tooLong, deadline: deadline
    ) { buffer, length in
      buffer.getSlice(at: buffer.readerIndex, length: length)
    }
  }

  func read(exactly count: Int, until deadline: NIODeadline?) throws -> ByteBuffer? {
    while true {
      if skipThrough != nil { dropSkippedBytes() }
      if count == 0 { return ByteBuffer() }
      if bufferedSize >= count { return takeBytes(count) }
      switch input {
      case .ended:
        if buffered.isEmpty { return nil }
        let received = bufferedSize
        while takeFirst() != nil {}
        throw NIOCoroutineChannelError.unexpectedEndOfInput(expected: count, received: received)
      case .failed(let error):
        throw error
      case .open:
        try waitForInput(until: deadline)
      }
    }
  }

  /// The next frame ending in `delimiter`, made by `extract(firstBuffer, length)` from the
  /// frame's `length` bytes at the start of the first buffer (`nil` from it: too long); the
  /// frame and its delimiter are then consumed. A frame of more than `limit` bytes throws
  /// `tooLong` and is skipped whole. At the end of input, what is left is the last frame.
  private func readFrame<Result>(
    delimiter: UInt8, limit: Int, tooLong: NIOCoroutineChannelError, deadline: NIODeadline?,
    _ extract: (ByteBuffer, Int) -> Result?
  ) throws -> Result? {
    while true {
      if skipThrough != nil { dropSkippedBytes() }
      if !buffered.isEmpty, let length = try findFrame(delimiter, limit: limit, tooLong) {
        let result = extract(buffered.first.unsafelyUnwrapped, length)
        consumeFirst(length + 1)
        guard let result else { throw tooLong }
        return result
      }
      switch input {
      case .ended:
        guard !buffered.isEmpty else { return nil }
        gatherIntoFirst(bufferedSize)
        let length = bufferedSize
        let result = length <= limit ? extract(buffered.first.unsafelyUnwrapped, length) : nil
        consumeFirst(length)
        guard let result else { throw tooLong }
        return result
      case .failed(let error):
        throw error
      case .open:
        try waitForInput(until: deadline)
      }
    }
  }

  /// The length of the first frame when the buffered bytes hold its delimiter, `nil` when more
  /// must arrive. Searches each byte once (`searchedBytes` remembers how far it got) and only
  /// as far as a frame of `limit` bytes could reach; past that, starts skipping the frame and
  /// throws `tooLong`.
  private func findFrame(
    _ delimiter: UInt8, limit: Int, _ tooLong: NIOCoroutineChannelError
  ) throws -> Int? {
    let reach = limit < Int.max ? limit + 1 : limit  // the delimiter's furthest position + 1
    while true {
      let first = buffered.first.unsafelyUnwrapped
      let end = min(first.readableBytes, reach)
      if let index = first.firstIndex(of: delimiter, from: searchedBytes, to: end) {
        searchedBytes = 0
        return index
      }
      searchedBytes = end
      if end == reach {
        searchedBytes = 0
        skipThrough = delimiter
        dropSkippedBytes()
        throw tooLong
      }
      guard let second = buffered.second else { return nil }
      if joinFrameEndingEarly(in: second, delimiter, reach: reach) { continue }
      _ = buffered.removeSecond()
      buffered.modifyFirst { $0.writeImmutableBuffer(second) }
    }
  }

  /// A frame that starts in the first buffer and ends early in the second (a line across two
  /// reads): moves the first buffer's bytes and the frame's part of the second into a small
  /// buffer of their own, which replaces the first, and leaves the rest of the second where it
  /// is. Returns false, changing nothing, when the delimiter is not in the second buffer within
  /// `reach` or ends it (then the whole second buffer belongs to the first).
  ///
  /// Appending the whole second buffer to the first instead copied it (64 KiB from a socket)
  /// into a buffer grown past the allocator's mapping threshold: a mapping, its page faults and
  /// an unmapping for every read that split a line, three quarters of N5's time.
  private func joinFrameEndingEarly(
    in second: ByteBuffer, _ delimiter: UInt8, reach: Int
  ) -> Bool {
    let firstCount = buffered.first.unsafelyUnwrapped.readableBytes
    let end = min(second.readableBytes, reach - firstCount)
    guard let index = second.firstIndex(of: delimiter, from: 0, to: end),
      index + 1 < second.readableBytes
    else { return false }
    let part = buffered.modifySecond { $0.readSlice(length: index + 1).unsafelyUnwrapped }
    let allocator = context?.channel.allocator ?? ByteBufferAllocator()
    var joined = allocator.buffer(capacity: firstCount + part.readableBytes)
    joined.writeImmutableBuffer(buffered.first.unsafelyUnwrapped)
    joined.writeImmutableBuffer(part)
    buffered.modifyFirst { $0 = joined }  // `searchedBytes` (firstCount) stays right
    return true
  }

  /// Drops buffered bytes up to and including the next `skipThrough` delimiter (the rest of a
  /// frame that was too long), as far as they have arrived.
  func dropSkippedBytes() {
    guard let delimiter = skipThrough else { return }
    while let first = buffered.first {
      if let index = first.firstIndex(of: delimiter, from: 0, to: first.readableBytes) {
        skipThrough = nil
        consumeFirst(index + 1)
        return
      }
      _ = takeFirst()
    }
  }

  /// Takes `count` bytes (all buffered): a slice of the first buffer when it holds them all,
  /// else a new buffer gathered from the buffers in turn.
  private func takeBytes(_ count: Int) -> ByteBuffer {
    let fromFirst = buffered.modifyFirst { buffer -> (slice: ByteBuffer, left: Int)? in
      guard let slice = buffer.readSlice(length: count) else { return nil }
      return (slice, buffer.readableBytes)
    }
    if let fromFirst {
      afterTakingBytes(count, left: fromFirst.left)
      return fromFirst.slice
    }
    var result = (context?.channel.allocator ?? ByteBufferAllocator()).buffer(capacity: count)
    while result.readableBytes < count {
      let part = min(buffered.first.unsafelyUnwrapped.readableBytes, count - result.readableBytes)
      var (slice, left) = buffered.modifyFirst { buffer in
        (buffer.readSlice(length: part).unsafelyUnwrapped, buffer.readableBytes)
      }
      result.writeBuffer(&slice)
      afterTakingBytes(part, left: left)
    }
    return result
  }

  /// Moves the buffers after the first into it until it holds `count` bytes.
  private func gatherIntoFirst(_ count: Int) {
    while buffered.first.unsafelyUnwrapped.readableBytes < count,
      let second = buffered.removeSecond()
    {
      buffered.modifyFirst { $0.writeImmutableBuffer(second) }
    }
  }

  /// Consumes `count` bytes at the start of the first buffer.
  private func consumeFirst(_ count: Int) {
    let left = buffered.modifyFirst { buffer in
      buffer.moveReaderIndex(forwardBy: count)
      return buffer.readableBytes
    }
    afterTakingBytes(count, left: left)
  }

  /// Accounts for `count` bytes taken from the first buffer, which has `left` bytes left;
  /// drops it once empty, so that NIO can reuse its receive buffer for the next read instead
  /// of allocating one.
  private func afterTakingBytes(_ count: Int, left: Int) {
    searchedBytes = 0
    bufferedSize -= count
    if left == 0 { _ = buffered.popFirst() }
    updateReading()
  }
}

extension CoroutineChannelHandler {
  /// `dropSkippedBytes()` of a byte stream, from generic code (only a byte stream skips).
  func dropSkippedBytesOfByteStream() {
    guard Inbound.self == ByteBuffer.self, Outbound.self == ByteBuffer.self else { return }
    unsafeDowncast(self, to: CoroutineChannelHandler<ByteBuffer, ByteBuffer>.self)
      .dropSkippedBytes()
  }
}
