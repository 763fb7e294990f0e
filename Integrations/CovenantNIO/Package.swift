// swift-tools-version:6.0
// CovenantNIO: SwiftNIO event loops as Covenant coroutine schedulers, EventLoopFuture bridges,
// and an example coroutine-per-request HTTP server with an async/await baseline.
// A separate package so the Covenant library itself stays dependency-free.
import PackageDescription

let package = Package(
  name: "CovenantNIO",
  // Higher than Covenant's minimums (macOS 12): the event-loop scheduler, the example server and
  // the async/await baseline use Synchronization's `Atomic` and `Mutex`, macOS 15 only.
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "CovenantNIO", targets: ["CovenantNIO"]),
    .library(name: "CovenantServiceContext", targets: ["CovenantServiceContext"]),
    .executable(name: "CovenantHTTPExample", targets: ["CovenantHTTPExample"]),
    .executable(name: "CovenantHTTPAsyncBaseline", targets: ["CovenantHTTPAsyncBaseline"]),
    .executable(name: "CovenantRESPExample", targets: ["CovenantRESPExample"]),
    .executable(name: "CovenantRESPAsyncBaseline", targets: ["CovenantRESPAsyncBaseline"]),
  ],
  dependencies: [
    .package(name: "Covenant", path: "../.."),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // Tests only: TLS under a coroutine connection (a handler added by the channel initializer).
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    // CovenantServiceContext: `ServiceContext.current` following coroutines.
    .package(url: "https://github.com/apple/swift-service-context", from: "1.5.1"),
    // Tests only: a span and log metadata carried by that context in a coroutine server.
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
  ],
  targets: [
    .target(
      name: "CovenantNIO",
      dependencies: [
        // The Foundation-free core, re-exported (CovenantNIO.swift): one dependency line gives
        // servers Covenant's types without loading Foundation.
        .product(name: "CovenantCore", package: "Covenant"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // `ServiceContext.current` as a coroutine-local: swift-distributed-tracing's spans and
    // swift-log's metadata providers follow a coroutine. Apart, so CovenantNIO alone needs no
    // swift-service-context.
    .target(
      name: "CovenantServiceContext",
      dependencies: [
        .product(name: "CovenantCore", package: "Covenant"),
        .product(name: "ServiceContextModule", package: "swift-service-context"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantHTTPExample",
      dependencies: [
        "CovenantNIO",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantHTTPAsyncBaseline",
      dependencies: [
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // The RESP servers' shared part: store, pub/sub registry, commands, RESP encoding and the
    // twin's incremental parser, so that the two servers differ only in their I/O.
    .target(
      name: "CovenantRESPCore",
      dependencies: [.product(name: "NIOCore", package: "swift-nio")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantRESPExample",
      dependencies: [
        "CovenantNIO",
        "CovenantRESPCore",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // N5: readLine throughput from memory (an EmbeddedChannel), run by redis.sh.
    .executableTarget(
      name: "CovenantNIOReadLineBenchmark",
      dependencies: [
        "CovenantNIO",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // X1: `Coroutine.awaitAsync` from a loop coroutine, task executor against global executor.
    .executableTarget(
      name: "CovenantNIOAwaitAsyncBenchmark",
      dependencies: [
        "CovenantNIO",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantRESPAsyncBaseline",
      dependencies: [
        "CovenantRESPCore",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantRESPCoreTests",
      dependencies: ["CovenantRESPCore", .product(name: "NIOCore", package: "swift-nio")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantNIOTests",
      dependencies: [
        "CovenantNIO",  // and, through its re-export, CovenantCore: the users' one line
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        "CovenantServiceContext",
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
