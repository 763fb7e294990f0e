// swift-tools-version:6.0
// Covenant's benchmarks: a separate package so the library itself stays dependency-free.
// Release builds only:
//   swift run -c release --package-path Benchmarks CovenantBenchmarks [--quick] [--only P1,C2]
import Foundation
import PackageDescription

// Parts of Covenant that land on main at different times (futures, channels, generators).
// The benchmarks for a part are compiled only when the root package's sources declare it, so
// this package builds against any state of main; a missing part prints
// `ID ... SKIPPED (not on main yet)` instead of a number. SwiftPM caches manifest evaluation by
// the manifest's own text: after such a part lands, build once with `--manifest-cache none`
// if it still says SKIPPED.
let rootSources = URL(fileURLWithPath: Context.packageDirectory)
  .deletingLastPathComponent().appendingPathComponent("Sources/Covenant")

func rootSourcesMatch(_ needles: [String]) -> Bool {
  guard let files = FileManager.default.enumerator(atPath: rootSources.path) else { return false }
  var text = ""
  for case let file as String in files where file.hasSuffix(".swift") {
    text += (try? String(contentsOfFile: rootSources.appendingPathComponent(file).path, encoding: .utf8)) ?? ""
  }
  return needles.contains { text.contains($0) }
}

var features: [SwiftSetting] = []
if rootSourcesMatch(["class CoPromise<"]) { features.append(.define("COVENANT_HAS_COPROMISE")) }
if rootSourcesMatch(["class CoChannel<"]) { features.append(.define("COVENANT_HAS_COCHANNEL")) }
if rootSourcesMatch(["struct Generator<", "class Generator<"]) {
  features.append(.define("COVENANT_HAS_GENERATOR"))
}

let package = Package(
  name: "CovenantBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Covenant", path: ".."),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
  ],
  targets: [
    .executableTarget(
      name: "CovenantBenchmarks",
      dependencies: [
        .product(name: "Covenant", package: "Covenant"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: features + [.swiftLanguageMode(.v5)]
    )
  ]
)
