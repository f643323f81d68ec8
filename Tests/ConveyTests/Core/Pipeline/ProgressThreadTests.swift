#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// App progress handlers never run on the thread that moves sockets: an upload's
/// `uploadProgressHandler`, `download(to:progress:)` and `FileDownloadingTask.downloadProgressHandler`
/// over `CurlTransport` against the local nginx, each with bodies large enough for many reports.
/// A first test shows that the check does see the loop's thread, where a transport's own progress
/// callback runs.
@Suite("Progress handlers off the event loop", .wire)
@ConveyActor
struct ProgressThreadTests {
    /// Each call of a progress handler: whether it ran on one of the transport's event loops, and
    /// the byte count it reported.
    final class Calls: @unchecked Sendable {
        private let loops: [CurlEventLoop]
        private let lock = NSLock()
        private var onLoop: [Bool] = []
        private var bytes: [Int64] = []

        init(_ transport: CurlTransport) {
            loops = transport.eventLoops + [CurlEventLoop.shared]
        }

        func note(_ count: Int64) {
            let current = loops.contains { $0.isCurrent }
            lock.withLock {
                onLoop.append(current)
                bytes.append(count)
            }
        }

        var count: Int { lock.withLock { bytes.count } }
        var callsOnTheLoop: Int { lock.withLock { onLoop.count { $0 } } }
        var lastBytes: Int64? { lock.withLock { bytes.last } }
        var increasing: Bool { lock.withLock { zip(bytes, bytes.dropFirst()).allSatisfy { $0 <= $1 } } }
    }

    /// A transport with event loops of its own, so every loop the check asks about is known.
    private let transport = CurlTransport(configuration: .init(eventLoops: 2))

    private func nginxServer() throws -> ConveyServer {
        let server = ConveyServer(remote: try TestServers.nginx(), configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = transport
        return server
    }

    private struct Upload: DataUploadingTask {
        let server: ConveyServer
        let uploadPayload: Data?
        let uploadProgressHandler: (@Sendable (_ bytesSent: Int64, _ totalBytes: Int64?) -> Void)?
        var path: String { "upload-sink" }
        var method: HTTPMethod { .post }
    }

    private struct LargeFile: ServerTask {
        let server: ConveyServer
        var path: String { "16m.bin" }
    }

    private struct LargeFileToDisk: FileDownloadingTask {
        let server: ConveyServer
        let destination: URL
        let downloadProgressHandler: (@Sendable (_ bytesWritten: Int64, _ totalBytes: Int64?) -> Void)?
        var path: String { "16m.bin" }
    }

    private static let largeFileSize: Int64 = 16 << 20

    @Test func theCheckSeesTheLoopThreadWhereTheTransportReports() async throws {
        let calls = Calls(transport)
        let response = try await transport.send(try TestServers.nginx("/256k.json"), progress: { calls.note($0.bytesReceived) })
        #expect(response.head.statusCode == 200)
        #expect(calls.count > 0)
        #expect(calls.callsOnTheLoop == calls.count, "a transport's own progress callback runs on its loop")
        #expect(calls.lastBytes == Int64(response.data.count))
    }

    @Test func anUploadProgressHandlerNeverRunsOnTheLoop() async throws {
        let calls = Calls(transport)
        let size = 8 << 20
        let payload = Data(repeating: 0x5a, count: size)
        let response = try await Upload(server: try nginxServer(), uploadPayload: payload,
                                        uploadProgressHandler: { sent, _ in calls.note(sent) }).download()
        #expect(response.statusCode == 204)
        #expect(calls.count > 1, "a body of \(size) bytes goes out in several reports")
        #expect(calls.callsOnTheLoop == 0)
        #expect(calls.lastBytes == Int64(size))
        #expect(calls.increasing)
    }

    @Test func aDownloadProgressHandlerNeverRunsOnTheLoop() async throws {
        try await withTemporaryFolder { folder in
            let calls = Calls(transport)
            let destination = folder.appending(path: "16m.bin")
            let response = try await LargeFile(server: try nginxServer()).download(to: destination, progress: { written, _ in calls.note(written) })
            #expect(response.payload == destination)
            #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int64 == Self.largeFileSize)
            #expect(calls.count > 1)
            #expect(calls.callsOnTheLoop == 0)
            #expect(calls.lastBytes == Self.largeFileSize)
            #expect(calls.increasing)
        }
    }

    @Test func aFileTasksDownloadProgressHandlerNeverRunsOnTheLoop() async throws {
        try await withTemporaryFolder { folder in
            let calls = Calls(transport)
            let destination = folder.appending(path: "16m.bin")
            let task = LargeFileToDisk(server: try nginxServer(), destination: destination, downloadProgressHandler: { written, _ in calls.note(written) })
            let response = try await task.download()
            #expect(response.payload == destination)
            #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int64 == Self.largeFileSize)
            #expect(calls.count > 1)
            #expect(calls.callsOnTheLoop == 0)
            #expect(calls.lastBytes == Self.largeFileSize)
            #expect(calls.increasing)
        }
    }
}
#endif
