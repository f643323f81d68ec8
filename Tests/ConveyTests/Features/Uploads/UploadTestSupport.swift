import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A directory of its own for one test's files and staged bodies, removed by `remove()`.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "convey-upload-tests-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `data` to a file in the directory.
    func file(_ name: String, _ data: Data) throws -> URL {
        let file = url.appending(path: name, directoryHint: .notDirectory)
        try data.write(to: file)
        return file
    }

    /// A file of `size` reproducible pseudo-random bytes, written a megabyte at a time.
    func randomFile(_ name: String, size: Int) throws -> URL {
        let file = url.appending(path: name, directoryHint: .notDirectory)
        #expect(FileManager.default.createFile(atPath: file.path(percentEncoded: false), contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var block = testBytes(count: 1 << 20, seed: 7)
        var written = 0
        var round: UInt8 = 0
        while written < size {
            block[0] = round
            let count = min(block.count, size - written)
            try handle.write(contentsOf: block.prefix(count))
            written += count
            round &+= 1
        }
        return file
    }

    /// The staged bodies left in the directory.
    func stagedFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path(percentEncoded: false)).filter { $0.hasPrefix("convey-upload-") }
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Reproducible pseudo-random bytes (xorshift), covering every byte value.
func testBytes(count: Int, seed: UInt64) -> Data {
    var state = seed | 1
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        bytes[index] = UInt8(truncatingIfNeeded: state)
    }
    return Data(bytes)
}

/// Decompresses gzip data with the system's `gzip` tool: an implementation independent of Convey's.
func gunzip(_ data: Data) throws -> Data {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let input = try scratch.file("body.gz", data)
    let process = Process()
    process.executableURL = URL(filePath: "/usr/bin/env")
    process.arguments = ["gzip", "-dc", input.path(percentEncoded: false)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let result = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "gzip -dc failed")
    return result
}

/// The body a transport was given: `httpBody`, or the contents of `bodyFile` while it still exists.
func sentBody(_ request: TransportRequest) throws -> Data {
    if let file = request.bodyFile { return try Data(contentsOf: file) }
    return try #require(request.request.body)
}

/// Thread-safe upload progress reports, in arrival order.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [UploadProgress] = []

    func add(_ progress: UploadProgress) { lock.withLock { items.append(progress) } }

    func add(_ bytesSent: Int64, _ totalBytes: Int64?) { add(UploadProgress(bytesSent: bytesSent, totalBytes: totalBytes)) }

    var reports: [UploadProgress] { lock.withLock { items } }
}

struct JSONUpload<Payload: Encodable & Sendable>: JSONUploadingTask {
    let server: ConveyServer
    var path = "anything"
    var method: HTTPMethod = .post
    var uploadPayload: Payload?
    var uploadGzipMinimumSize: Int?
}

struct FormUpload: FormUploadingTask {
    let server: ConveyServer
    var path = "post"
    var method: HTTPMethod = .post
    var uploadPayload: [String: String]?
}

struct DataUpload: DataUploadingTask {
    let server: ConveyServer
    var path = "anything"
    var method: HTTPMethod = .post
    var uploadPayload: Data?
    var contentType = "application/octet-stream"
    var uploadGzipMinimumSize: Int?
}

struct MIMEUpload: MIMEUploadingTask {
    let server: ConveyServer
    var path = "post"
    var method: HTTPMethod = .post
    var uploadPayload: MIMEPayload?
    var stagingDirectory: URL
    var uploadGzipMinimumSize: Int?
}

struct FileUpload: FileUploadingTask {
    let server: ConveyServer
    var path = "anything"
    var method: HTTPMethod = .post
    var uploadPayload: URL?
    var contentType = "application/octet-stream"
    var stagingDirectory: URL
    var uploadGzipMinimumSize: Int?
    var uploadProgressHandler: (@Sendable (Int64, Int64?) -> Void)?
}

/// A JSON upload that keeps the default `uploadGzipMinimumSize`, the server's.
struct DefaultCompressionUpload: JSONUploadingTask {
    let server: ConveyServer
    var path: String { "anything" }
    var method: HTTPMethod { .post }
    var uploadPayload: [String]?
}

