import Foundation
import XCTest

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A plain blocking TCP client on a real loopback socket, for the peer side of connection tests:
/// it can send, read, half-close, stop reading, or vanish. Every receive has a timeout, so a
/// broken server fails the test instead of hanging it.
final class LoopbackClient: @unchecked Sendable {  // used by one thread at a time
  private(set) var descriptor: Int32

  /// Connects to 127.0.0.1:`port`.
  init(port: Int, receiveBuffer: Int? = nil) throws {
    descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw SocketError(code: errno) }
    if let receiveBuffer {
      var size = Int32(receiveBuffer)
      setsockopt(
        descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var timeout = timeval(tv_sec: 30, tv_usec: 0)
    setsockopt(
      descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else {
      let error = SocketError(code: errno)
      closeSocket(descriptor)
      throw error
    }
  }

  deinit { if descriptor >= 0 { closeSocket(descriptor) } }

  func send(_ text: String) { send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes[offset...].withUnsafeBytes {
        sendBytes(descriptor, $0.baseAddress, $0.count)
      }
      guard sent > 0 else { return }
      offset += sent
    }
  }

  /// Reads until `count` bytes have arrived, the peer closes, or 30 s pass.
  func receive(count: Int) -> [UInt8] {
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while received.count < count {
      let n = chunk.withUnsafeMutableBytes {
        recv(descriptor, $0.baseAddress, min($0.count, count - received.count), 0)
      }
      if n <= 0 { break }
      received += chunk[0..<n]
    }
    return received
  }

  /// Reads until the text received ends with `suffix`, the peer closes, or 30 s pass.
  func receive(until suffix: String) -> String {
    var received: [UInt8] = []
    let suffix = Array(suffix.utf8)
    var byte: UInt8 = 0
    while !received.ends(with: suffix) {
      if recv(descriptor, &byte, 1, 0) != 1 { break }
      received.append(byte)
    }
    return String(decoding: received, as: UTF8.self)
  }

  /// Reads everything until the peer closes its side (or 30 s pass).
  func receiveToEnd() -> String {
    String(decoding: receive(count: .max), as: UTF8.self)
  }

  /// Half-closes: the server reads the end of input, and may still write.
  func shutdownWrite() { shutdown(descriptor, Int32(SHUT_WR)) }

  /// Resets the connection: closes the socket with a zero linger time, so the kernel sends a
  /// TCP RST (the peer process vanished).
  func reset() {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    closeSocket(descriptor)
    descriptor = -1
  }
}

/// A failed socket call, with its `errno`.
struct SocketError: Error {
  let code: Int32
}

private func closeSocket(_ descriptor: Int32) { _ = close(descriptor) }

private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
  #if canImport(Glibc)
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
  #else
    send(descriptor, bytes, count, 0)
  #endif
}

extension Array where Element: Equatable {
  fileprivate func ends(with suffix: [Element]) -> Bool {
    count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
  }
}
