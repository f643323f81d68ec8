// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Convey",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Convey", targets: ["Convey"]),
        .executable(name: "convey-harness", targets: ["ConveyHarness"]),
    ],
    targets: [
        .target(name: "Convey", path: "Sources/Convey"),
        .executableTarget(name: "ConveyHarness", dependencies: ["Convey"], path: "Harness"),
        .executableTarget(name: "CacheBench", dependencies: ["Convey"], path: "Benchmarks/CacheBench"),
        .testTarget(name: "ConveyTests", dependencies: ["Convey"], path: "Tests/ConveyTests"),
    ],
    swiftLanguageModes: [.v6]
)
