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
        .target(name: "Convey", dependencies: [.target(name: "CConveyCurlShim", condition: .when(platforms: [.linux]))],
                path: "Sources/Convey"),
        // libcurl, for CurlTransport on Linux: a system library found through pkg-config.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"]), .yum(["libcurl-devel"])]),
        .target(name: "CConveyCurlShim", dependencies: ["CCurl"], path: "Sources/CConveyCurlShim"),
        .executableTarget(name: "TransportBench", dependencies: ["Convey"], path: "Benchmarks/TransportBench"),
        .executableTarget(name: "ConveyHarness", dependencies: ["Convey"], path: "Harness"),
        .testTarget(name: "ConveyTests", dependencies: ["Convey"], path: "Tests/ConveyTests"),
    ],
    swiftLanguageModes: [.v6]
)
