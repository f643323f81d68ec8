// Measures how much memory Convey needs to upload a large file: the process's resident set while
// uploading, above its resident set when idle (after a warm-up request). Not a test: a figure.
//
//   scripts/bench-upload-memory [size in MiB, default 1024]
//
// Uploads go to nginx's /upload-sink (see scripts/with-test-servers), which reads and discards the
// body: httpbin would echo a 1 GiB body back, and the response would then dominate the figure.
import BenchSupport
@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The limit the upload path must stay under, above idle.
let limitMiB = 64.0

/// A file of `size` bytes of varied content, written a MiB at a time.
func makeFile(at url: URL, size: Int) throws {
    guard FileManager.default.createFile(atPath: url.path(percentEncoded: false), contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var block = [UInt8](repeating: 0, count: 1 << 20)
    for index in block.indices {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        block[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    var written = 0
    while written < size {
        block[0] &+= 1
        let count = min(block.count, size - written)
        try handle.write(contentsOf: block.prefix(count))
        written += count
    }
}

struct FileToSink: FileUploadingTask {
    let server: ConveyServer
    var path: String { "upload-sink" }
    var method: HTTPMethod { .post }
    let uploadPayload: URL?
    let stagingDirectory: URL
}

struct MultipartToSink: MIMEUploadingTask {
    let server: ConveyServer
    var path: String { "upload-sink" }
    var method: HTTPMethod { .post }
    let uploadPayload: MIMEPayload?
    let stagingDirectory: URL
}

struct WarmUp: DataUploadingTask {
    let server: ConveyServer
    var path: String { "upload-sink" }
    var method: HTTPMethod { .post }
    var uploadPayload: Data? { Data(count: 64 * 1024) }
}

@ConveyActor
func run() async throws -> Bool {
    guard let base = ProcessInfo.processInfo.environment["CONVEY_NGINX_URL"].flatMap(URL.init(string:)) else {
        print("CONVEY_NGINX_URL is not set: run this through scripts/bench-upload-memory")
        return false
    }
    let sizeMiB = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1024
    let directory = FileManager.default.temporaryDirectory.appending(path: "convey-upload-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appending(path: "upload.bin")
    try makeFile(at: file, size: sizeMiB << 20)

    let server = ConveyServer(remote: Remote(name: "nginx", url: base), configuration: ServerConfiguration(defaultEchoStyle: []))
    for _ in 0..<3 { try await WarmUp(server: server).send() }
    let idle = ProcessFigures.statusMiB("VmRSS")
    print(String(format: "Uploading %d MiB to %@/upload-sink; idle RSS %.1f MiB", sizeMiB, base.absoluteString, idle))

    var withinLimit = true
    let uploads: [(String, @ConveyActor () async throws -> Void)] = [
        ("file body (FileUploadingTask, streamed from disk)", {
            try await FileToSink(server: server, uploadPayload: file, stagingDirectory: directory).send()
        }),
        ("multipart with a file part (staged in chunks, then streamed)", {
            try await MultipartToSink(server: server, uploadPayload: MIMEPayload(parts: [
                MIMEPart(name: "file", fileURL: file), MIMEPart(name: "note", stringValue: "benchmark"),
            ]), stagingDirectory: directory).send()
        }),
    ]
    for (name, upload) in uploads {
        let resettable = ProcessFigures.resetPeak()
        let clock = ContinuousClock.now
        try await upload()
        let seconds = clock.duration(to: .now).timeInterval
        let peak = ProcessFigures.statusMiB("VmHWM")
        let above = peak - idle
        withinLimit = withinLimit && above < limitMiB
        print(String(format: "  %@: %.1f s (%.0f MiB/s), peak RSS %.1f MiB, %.1f MiB above idle%@ -> %@",
                     name, seconds, Double(sizeMiB) / seconds, peak, above,
                     resettable ? "" : " (peak since start: clear_refs not writable)", above < limitMiB ? "ok" : "OVER \(Int(limitMiB)) MiB"))
    }
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path(percentEncoded: false)).filter { $0 != "upload.bin" }
    print("  staged files left behind: \(leftovers.count)")
    return withinLimit && leftovers.isEmpty
}

extension Duration {
    var timeInterval: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

do {
    exit(try await run() ? 0 : 1)
} catch {
    print("Upload benchmark failed: \(error)")
    exit(1)
}
