import CovenantNIO
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import XCTest

/// TLS (swift-nio-ssl) in front of coroutine connections, added by the channel initializers,
/// with a certificate made for the test by the `openssl` command-line tool.
final class TLSConnectionTests: ConnectionTestCase {
  func testEchoOverTLSWithHalfClose() throws {
    let (certificate, key) = try makeSelfSignedCertificate()
    let serverContext = try NIOSSLContext(
      configuration: .makeServerConfiguration(
        certificateChain: [.certificate(certificate)], privateKey: .privateKey(key)))
    var clientConfiguration = TLSConfiguration.makeClientConfiguration()
    clientConfiguration.trustRoots = .certificates([certificate])
    let clientContext = try NIOSSLContext(configuration: clientConfiguration)

    let server = try serve(
      channelInitializer: { channel in
        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext))
      }
    ) { connection in
      var lines = 0
      while let line = try connection.readLine() {
        lines += 1
        try connection.write("tls: \(line)\n")
      }
      try connection.write("read \(lines) lines\n")
    }
    defer { try? server.close() }

    let loop = group.next()
    let port = server.port
    let transcript = loop.coroutineFuture { () -> [String] in
      let connection = try ClientBootstrap(group: loop).connectCoroutine(
        host: "127.0.0.1", port: port,
        channelInitializer: { channel in
          try channel.pipeline.syncOperations.addHandler(
            try NIOSSLClientHandler(context: clientContext, serverHostname: "localhost"))
        })
      var seen: [String] = []
      for word in ["alpha", "beta"] {
        try connection.write("\(word)\n")
        seen.append(try connection.readLine() ?? "nil")
      }
      try connection.closeOutbound()  // close_notify, then the server's read returns nil
      while let line = try connection.readLine() { seen.append(line) }
      try connection.close()
      return seen
    }
    XCTAssertEqual(value(of: transcript), ["tls: alpha", "tls: beta", "read 2 lines"])
  }

  /// A self-signed certificate for `localhost` and its key, made by `openssl` in a temporary
  /// directory (an EC key: fast to make).
  private func makeSelfSignedCertificate() throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("covenant-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let keyPath = directory.appendingPathComponent("key.pem").path
    let certificatePath = directory.appendingPathComponent("certificate.pem").path
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    openssl.arguments = [
      "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
      "-nodes", "-keyout", keyPath, "-out", certificatePath, "-days", "1",
      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ]
    openssl.standardError = FileHandle.nullDevice
    try openssl.run()
    openssl.waitUntilExit()
    guard openssl.terminationStatus == 0 else {
      throw XCTSkip("openssl could not make a certificate (status \(openssl.terminationStatus))")
    }
    guard let certificate = try NIOSSLCertificate.fromPEMFile(certificatePath).first else {
      throw XCTSkip("openssl wrote no certificate")
    }
    return (certificate, try NIOSSLPrivateKey(file: keyPath, format: .pem))
  }
}
