// swift-tools-version:6.0
// Covenant's benchmarks: a separate package so the library itself stays dependency-free.
// Release builds only:
//   swift run -c release --package-path Benchmarks CovenantBenchmarks [--quick] [--only P1,C2]
import PackageDescription

let package = Package(
  name: "CovenantBenchmarks",
  // Higher than the library's minimums (macOS 12): baselines use Synchronization's `Mutex`
  // (C2's continuation slots, S1's lock), macOS 15 only.
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Covenant", path: ".."),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // F1–F3's baselines (merge, share).
    .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
  ],
  targets: [
    // Counts allocations by interposing malloc (linked into the benchmark executable only).
    .target(name: "AllocationCounter"),
    .executableTarget(
      name: "CovenantBenchmarks",
      dependencies: [
        "AllocationCounter",
        .product(name: "Covenant", package: "Covenant"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
      ],
      swiftSettings: [.swiftLanguageMode(.v5)]
    ),
  ]
)
