// swift-tools-version: 6.2
// 6.2: the code uses `@concurrent` (SE-0461), which Swift 6.2 introduced.
import PackageDescription

let package = Package(
    name: "Convey",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Convey", targets: ["Convey"]),
        // Swift Testing traits that scope HAR fixtures to a test or a suite; `Testing` ships with the toolchain.
        .library(name: "ConveyTesting", targets: ["ConveyTesting"]),
        .executable(name: "convey-harness", targets: ["ConveyHarness"]),
    ],
    targets: [
        // zlib for gzipped request bodies. On Linux it links the runtime library by its soname,
        // so building needs no zlib1g-dev (which only adds the unversioned libz.so link).
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .target(name: "Convey", dependencies: [
            "CZlib",
            .target(name: "CConveyCurlShim", condition: .when(platforms: [.linux])),
        ], path: "Sources/Convey", linkerSettings: [
            .linkedLibrary(":libz.so.1", .when(platforms: [.linux])),
            .linkedLibrary("z", .when(platforms: [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS])),
        ]),
        // libcurl, for CurlTransport on Linux. Its entry points are declared in Sources/CCurl and the
        // runtime library is linked by its soname, which FoundationNetworking itself links, so
        // building needs no libcurl development headers (libcurl4-openssl-dev) and no pkg-config.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        .target(name: "CConveyCurlShim", dependencies: ["CCurl"], path: "Sources/CConveyCurlShim", linkerSettings: [
            .linkedLibrary(":libcurl.so.4", .when(platforms: [.linux])),
        ]),
        .target(name: "ConveyTesting", dependencies: ["Convey"], path: "Sources/ConveyTesting"),
        .executableTarget(name: "ConveyHarness", dependencies: ["Convey"], path: "Harness", exclude: ["Benchmarks"]),
        // Benchmarks: release builds run by scripts/bench-*, beside the harness they share a folder with.
        .target(name: "BenchSupport", dependencies: ["Convey"], path: "Harness/Benchmarks/BenchSupport"),
        .executableTarget(name: "ConveyBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/ConveyBench"),
        .executableTarget(name: "UploadMemoryBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/UploadMemoryBench"),
        .executableTarget(name: "CacheBench", dependencies: ["Convey"], path: "Harness/Benchmarks/CacheBench"),
        .executableTarget(name: "DownloadBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/DownloadBench"),
        .executableTarget(name: "StreamBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/StreamBench"),
        .executableTarget(name: "OutboxBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/OutboxBench"),
        .executableTarget(name: "HARBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/HARBench"),
        .executableTarget(name: "SeamBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/SeamBench"),
        .executableTarget(name: "TracingBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/TracingBench"),
        .executableTarget(name: "WebSocketBench", dependencies: ["Convey", "BenchSupport"], path: "Harness/Benchmarks/WebSocketBench"),
        // A program the tests run as a child process: standard output into a pipe, no default server.
        .executableTarget(name: "ConveyFreshProcess", dependencies: ["Convey"], path: "Tests/FreshProcess"),
        .testTarget(name: "ConveyTests", dependencies: ["Convey", "ConveyTesting"], path: "Tests/ConveyTests"),
    ],
    swiftLanguageModes: [.v6]
)
