// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Covenant",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Covenant", targets: ["Covenant"]),
    .library(name: "CovenantTesting", targets: ["CovenantTesting"]),
    .executable(name: "CovenantExample", targets: ["CovenantExample"]),
  ],
  targets: [
    // No unsafe flags anywhere: the package must stay usable as a remote dependency.
    .target(name: "CCoroutineContext"),
    .target(
      name: "Covenant",
      dependencies: ["CCoroutineContext"],
      swiftSettings: [.swiftLanguageMode(.v6), .enableExperimentalFeature("RawLayout")]
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
      dependencies: ["Covenant", "CovenantTesting", "CCoroutineContext", "CovenantModel"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .testTarget(
      name: "CovenantSwift5Tests",
      dependencies: ["Covenant", "CovenantTesting"],
      swiftSettings: [.swiftLanguageMode(.v5)]
    ),
    .testTarget(
      name: "CovenantTestingTests",
      dependencies: ["Covenant", "CovenantTesting"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
