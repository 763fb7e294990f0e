// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Covenant",
  // The oldest OS versions Swift concurrency ships with (macOS 12, iOS 15, tvOS 15, watchOS 8)
  // and the first visionOS; nothing newer is used (README, "Requirements").
  platforms: [.iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1), .macOS(.v12)],
  products: [
    // Everything google/promises and SwiftCoroutine clients had: the core and the Foundation pieces.
    .library(name: "Covenant", targets: ["Covenant"]),
    // The Foundation-free core, for servers (Dispatch and the C module only).
    .library(name: "CovenantCore", targets: ["CovenantCore"]),
    .library(name: "CovenantTesting", targets: ["CovenantTesting"]),
    .executable(name: "CovenantExample", targets: ["CovenantExample"]),
  ],
  targets: [
    // No unsafe flags anywhere: the package must stay usable as a remote dependency.
    // The context switch, stacks, fibers, snapshots: C and assembly, usable from C alone.
    .target(name: "CCoroutineContext"),
    // The C only the Swift layer needs (atomics, thread-local slot access, direct dispatch,
    // ThreadSanitizer annotations), above CCoroutineContext.
    .target(name: "CCovenantShims", dependencies: ["CCoroutineContext"]),
    // Promises, coroutines, futures, channels, scopes, generators, actors and the Swift
    // concurrency bridges, without Foundation.
    // `RawLayout` (an experimental feature, not an unsafe flag: remote dependents may use it)
    // gives the lock-and-atomics layer (Atomics/) storage with a stable address, inline.
    .target(
      name: "CovenantCore",
      dependencies: ["CCoroutineContext", "CCovenantShims"],
      swiftSettings: [.swiftLanguageMode(.v6), .enableExperimentalFeature("RawLayout")]
    ),
    // The pieces that need Foundation: `RunLoop`/`OperationQueue` schedulers, `waitForPromises`,
    // `NSError` bridging, Foundation value types in the returned-error rule.
    .target(
      name: "CovenantFoundation",
      dependencies: ["CovenantCore"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // The umbrella: re-exports CovenantCore and CovenantFoundation.
    .target(
      name: "Covenant",
      dependencies: ["CovenantCore", "CovenantFoundation"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .target(
      name: "CovenantTesting",
      dependencies: ["Covenant"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // Random programs checked against a reference model, shared by the tests and the soak.
    .target(
      name: "CovenantModel",
      dependencies: ["Covenant"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantSoak",
      dependencies: ["Covenant", "CovenantModel"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "CovenantExample",
      dependencies: ["Covenant"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantTests",
      dependencies: [
        "Covenant", "CovenantTesting", "CCoroutineContext", "CCovenantShims", "CovenantModel",
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantSwift5Tests",
      dependencies: ["Covenant", "CovenantTesting"],
      swiftSettings: [.swiftLanguageMode(.v5)]
    ),
    // URLSession futures against a local HTTP server on a real socket.
    .testTarget(
      name: "CovenantFoundationTests",
      dependencies: ["Covenant", "CovenantTesting"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantTestingTests",
      dependencies: ["Covenant", "CovenantTesting"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
