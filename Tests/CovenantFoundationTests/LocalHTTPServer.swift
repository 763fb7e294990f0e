import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A small HTTP/1.1 server on a real socket of 127.0.0.1 (an ephemeral port), one thread per
/// connection, for the URLSession tests. Routes:
/// - `GET /hello`: 200, body `hello`;
/// - `POST /echo`: 200, the request's body back;
/// - `GET /bytes/N`: 200, N bytes (`0`–`9` repeated);
/// - `GET /hang`: reads the request, answers nothing, and waits until the client closes the
///   connection, which it records: what a cancelled request looks like from the server's side.
///
/// Every response says `Connection: close`, so no connection is reused between requests.
final class LocalHTTPServer: @unchecked Sendable {
  // `@unchecked Sendable`: `listener` is set once in `init`; the counters are under `lock`.
  let port: Int
  private let listener: Int32
  private let lock = NSLock()
  private var hangsStarted = 0
  private var hangsClosed = 0
  private var stopped = false
  private var requests = 0
  private let hangStarted = DispatchSemaphore(value: 0)
  private let hangClosed = DispatchSemaphore(value: 0)
  private let acceptLoopDone = DispatchSemaphore(value: 0)

  init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerError.system("socket", errno) }
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
      close(fd)
      throw ServerError.system("bind/listen", errno)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    listener = fd
    port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [self] in acceptLoop() }
    thread.name = "LocalHTTPServer accept"
    thread.start()
  }

  /// `http://127.0.0.1:<port><path>`.
  func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

  /// Stops accepting (connections already open finish on their own); later calls do nothing.
  func stop() {
    lock.lock()
    let first = !stopped
    stopped = true
    lock.unlock()
    guard first else { return }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    _ = acceptLoopDone.wait(timeout: .now() + 10)
  }

  /// Waits until a `/hang` request has been read (at most `timeout` seconds): whether one was.
  func waitForHangingRequest(timeout: TimeInterval = 10) -> Bool {
    hangStarted.wait(timeout: .now() + timeout) == .success
  }

  /// Waits until a `/hang` connection has been closed by the client (at most `timeout`
  /// seconds): whether one was.
  func waitForClosedHang(timeout: TimeInterval = 10) -> Bool {
    hangClosed.wait(timeout: .now() + timeout) == .success
  }

  /// How many requests were read, on any route.
  var requestCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return requests
  }

  /// How many `/hang` requests were read, and how many of their connections the client closed.
  var hangCounts: (started: Int, closed: Int) {
    lock.lock()
    defer { lock.unlock() }
    return (hangsStarted, hangsClosed)
  }

  private func acceptLoop() {
    defer { acceptLoopDone.signal() }
    while true {
      let connection = accept(listener, nil, nil)
      if connection < 0 {
        if errno == EINTR { continue }
        return  // the listener was closed
      }
      let thread = Thread { [self] in serve(connection) }
      thread.start()
    }
  }

  private func serve(_ connection: Int32) {
    defer { close(connection) }
    guard let request = readRequest(connection) else { return }
    lock.lock()
    requests += 1
    lock.unlock()
    switch (request.method, request.path) {
    case ("GET", "/hello"):
      respond(connection, body: Array("hello".utf8))
    case ("POST", "/echo"), ("PUT", "/echo"):
      respond(connection, body: request.body)
    case ("GET", let path) where path.hasPrefix("/bytes/"):
      let count = Int(path.dropFirst("/bytes/".count)) ?? 0
      respond(connection, body: (0..<count).map { UInt8(ascii: "0") + UInt8($0 % 10) })
    case ("GET", "/hang"):
      hang(connection)
    default:
      respond(connection, status: "404 Not Found", body: Array("no such route".utf8))
    }
  }

  /// Records the request, then reads until the client closes the connection (end of input or
  /// a reset), and records that.
  private func hang(_ connection: Int32) {
    lock.lock()
    hangsStarted += 1
    lock.unlock()
    hangStarted.signal()
    var byte: UInt8 = 0
    while true {
      let count = recv(connection, &byte, 1, 0)
      if count > 0 { continue }
      if count < 0, errno == EINTR { continue }
      break
    }
    lock.lock()
    hangsClosed += 1
    lock.unlock()
    hangClosed.signal()
  }

  private struct Request {
    var method: String
    var path: String
    var body: [UInt8]
  }

  /// Reads the head (up to the blank line) and a `Content-Length` body; `nil` if the client
  /// closed first.
  private func readRequest(_ connection: Int32) -> Request? {
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    let separator = Array("\r\n\r\n".utf8)
    var headEnd: Int?
    while headEnd == nil {
      let count = recv(connection, &chunk, chunk.count, 0)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return nil }
      buffer += chunk[0..<count]
      headEnd = buffer.firstRange(of: separator)?.upperBound
    }
    let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
    let lines = head.components(separatedBy: "\r\n")
    let parts = lines[0].split(separator: " ")
    guard parts.count >= 2 else { return nil }
    var length = 0
    for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
      length =
        Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    var body = Array(buffer[headEnd!...])
    while body.count < length {
      let count = recv(connection, &chunk, chunk.count, 0)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return nil }
      body += chunk[0..<count]
    }
    return Request(method: String(parts[0]), path: String(parts[1]), body: body)
  }

  private func respond(_ connection: Int32, status: String = "200 OK", body: [UInt8]) {
    let head =
      "HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\n"
      + "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    let bytes = Array(head.utf8) + body
    var sent = 0
    while sent < bytes.count {
      let count = bytes.withUnsafeBytes {
        send(connection, $0.baseAddress! + sent, $0.count - sent, Self.noSignal)
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { return }
      sent += count
    }
  }

  /// A peer that went away makes `send` fail with `EPIPE` rather than raise `SIGPIPE`.
  #if canImport(Glibc)
    private static let noSignal = Int32(MSG_NOSIGNAL)
  #else
    private static let noSignal: Int32 = 0
  #endif

  enum ServerError: Error {
    case system(String, Int32)
  }
}
