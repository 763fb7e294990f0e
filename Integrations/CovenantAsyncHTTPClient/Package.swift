// swift-tools-version:6.0
// CovenantAsyncHTTPClient: AsyncHTTPClient requests awaited in Covenant coroutines, cancelled
// with the coroutine, its scope, or a timeout. A separate package so the Covenant library itself
// stays dependency-free.
import PackageDescription

let package = Package(
  name: "CovenantAsyncHTTPClient",
  // `Duration` (timeouts) needs these; AsyncHTTPClient itself asks for less.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "CovenantAsyncHTTPClient", targets: ["CovenantAsyncHTTPClient"])
  ],
  dependencies: [
    .package(name: "Covenant", path: "../.."),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
  ],
  targets: [
    .target(
      name: "CovenantAsyncHTTPClient",
      dependencies: [
        // The Foundation-free core: a server's one Covenant dependency.
        .product(name: "CovenantCore", package: "Covenant"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantAsyncHTTPClientTests",
      dependencies: [
        "CovenantAsyncHTTPClient",
        .product(name: "CovenantCore", package: "Covenant"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
