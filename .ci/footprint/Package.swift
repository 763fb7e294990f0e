// swift-tools-version:6.0
// The footprint check of `.ci/footprint.sh`: the same small piece of work (a promise fulfilled on
// a worker, awaited by a coroutine on a serial queue) through CovenantCore and through Dispatch
// alone. A package of its own, so the root package keeps only the library's targets.
import PackageDescription

let package = Package(
  name: "CovenantFootprint",
  platforms: [.iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1), .macOS(.v12)],
  dependencies: [.package(name: "Covenant", path: "../..")],
  targets: [
    // Reads the memory figures (peak RSS, peak private anonymous RSS) without Foundation.
    .target(name: "FootprintSupport"),
    .executableTarget(
      name: "FootprintCore",
      dependencies: ["FootprintSupport", .product(name: "CovenantCore", package: "Covenant")],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "FootprintDispatch",
      dependencies: ["FootprintSupport"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
