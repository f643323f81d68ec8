import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A download's bytes reach its partial file on a writer queue, off the transport's thread: a
/// write that fails still ends the download with its typed error, and a writer that falls behind
/// stops pulling the body, whose full buffer pauses the transfer, which then resumes with every
/// byte in order.
@Suite("Writing a download off the transport's thread")
@ConveyActor
struct DownloadWriterTests {
    private struct Plain: DownloadingTask {
        let server: ConveyServer
        var path: String { "file.bin" }
    }

    private let folder = FileManager.default.temporaryDirectory.appending(path: "convey-writer-\(UUID().uuidString)")

    /// The body of `url` as the chain passes it up to a download's writer: a stream the writer
    /// pulls, fed by `transport` through `sink` (the stream's buffer, or a sink around it).
    private func streamedBody(_ url: URL, over transport: any ConveyTransport, capacity: Int,
                              through sink: @escaping @Sendable (any ResponseBodySink) -> any ResponseBodySink = { $0 })
        async throws -> (head: ResponseHead, body: ResponseBody) {
        let transfer = StreamTransfer(url: url, timeout: .seconds(60), capacity: capacity, readerKeepsPace: true) { buffer in
            try await transport.send(TransportRequest(request: OutgoingRequest(url: url), timeout: .seconds(60)), into: sink(buffer))
        }
        return (try await transfer.head(), .stream(transfer))
    }

    @Test func aWriteThatFailsEndsTheDownloadWithItsErrorAndLeavesTheDestinationAlone() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appending(path: "file.bin")
        try Data("previous version".utf8).write(to: destination)
        let claim = try PartialDownload(destination: destination).claim(permissions: 0o600)
        let writes = WriteLog()
        let body = FileBody(claim: claim, resumePoint: nil, progress: nil, write: { (bytes, offset) throws(FileFailure) in
            // The second chunk finds the disk full.
            guard writes.add(offset) > 1 else { return }
            throw FileFailure(path: claim.partial.file.path, action: "write to", code: ENOSPC)
        })
        let chunk = Data(repeating: 7, count: 1000)
        try body.receive(ResponseHead(statusCode: 200, fields: ["Content-Length": "4000"], url: URL(filePath: "/file.bin")))

        var thrown: (any Error)?
        do {
            for _ in 0..<4 { _ = try chunk.withUnsafeBytes { try body.offer($0) } }
            try await body.finishTransfer()
        } catch {
            thrown = error
        }
        claim.release()

        guard let failure = (thrown as? ConveyError)?.downloadFailure else {
            Issue.record("expected ConveyError.downloadFailed, got \(String(describing: thrown))")
            return
        }
        #expect(failure.destination == destination)
        #expect(failure.reason.contains(String(cString: strerror(ENOSPC))))
        // Nothing is written after the failure, and the destination keeps what it had.
        #expect(writes.offsets == [0, 1000])
        #expect(try Data(contentsOf: destination) == Data("previous version".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["file.bin"])
    }

    /// 48 MiB with the writer held a second at its first write: URLSession on Linux cannot pause,
    /// and once it queued 16 MiB beside a slow writer the download used to fail.
    @Test(.wire, arguments: TransportKind.allCases)
    func aWriterFarBehindNeverFailsTheDownload(_ kind: TransportKind) async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestServers.nginx("/48m.bin")
        let destination = folder.appending(path: "far.bin")
        let claim = try PartialDownload(destination: destination).claim(permissions: 0o600)
        defer { claim.release() }
        let body = FileBody(claim: claim, resumePoint: nil, progress: nil, write: { (bytes, offset) throws(FileFailure) in
            if offset == 0 { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 1) }
            try claim.write(bytes, at: offset)
        }, bufferLimit: 256 << 10)

        let (head, streamed) = try await streamedBody(url, over: kind.make(), capacity: 1 << 20)
        try await body.write(streamed, of: head)

        let written = try Data(contentsOf: claim.partial.file)
        #expect(written == Data(count: 48 << 20))
    }

    @Test(.wire, arguments: TransportKind.allCases)
    func aWriterThatFallsBehindPausesTheTransferAndEveryByteArrivesInOrder(_ kind: TransportKind) async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try TestServers.nginx("/16m.bin")
        let transport = kind.make()
        let destination = folder.appending(path: "big.bin")
        let claim = try PartialDownload(destination: destination).claim(permissions: 0o600)
        defer { claim.release() }
        // The first write waits until the sink has refused bytes, so the writer is certainly behind.
        let gate = DispatchSemaphore(value: 0)
        let body = FileBody(claim: claim, resumePoint: nil, progress: nil, write: { (bytes, offset) throws(FileFailure) in
            if offset == 0 { _ = gate.wait(timeout: .now() + 60) }
            try claim.write(bytes, at: offset)
        }, bufferLimit: 256 << 10)
        let refusals = RefusalCount(onFirst: { gate.signal() })

        let (head, streamed) = try await streamedBody(url, over: transport, capacity: 256 << 10) { buffer in
            RefusalCountingSink(buffer, count: refusals)
        }
        try await body.write(streamed, of: head)

        #expect(refusals.value > 0)
        let written = try Data(contentsOf: claim.partial.file)
        let original = try await transport.send(url, timeout: .seconds(60)).data
        #expect(written.count == 16 << 20)
        // Compared byte for byte: hashing 16 MiB in a debug or sanitizer build holds a pool
        // thread for minutes, starving every other test of the process.
        #expect(written == original)
    }
}

/// The offsets a test writer was asked to write at.
private final class WriteLog: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Int64] = []

    /// Records an offset; returns how many were recorded.
    func add(_ offset: Int64) -> Int {
        lock.withLock {
            recorded.append(offset)
            return recorded.count
        }
    }

    var offsets: [Int64] { lock.withLock { recorded } }
}

/// How many times a sink refused bytes, telling `onFirst` of the first.
private final class RefusalCount: Sendable {
    private let count = Locked(0)
    private let onFirst: @Sendable () -> Void

    init(onFirst: @escaping @Sendable () -> Void) {
        self.onFirst = onFirst
    }

    var value: Int { count.value }

    func add() {
        let first = count.withLock { count in
            count += 1
            return count == 1
        }
        if first { onFirst() }
    }
}

/// Passes everything to a sink and counts the times it refused bytes.
private final class RefusalCountingSink: ResponseBodySink {
    private let base: any ResponseBodySink
    private let count: RefusalCount

    init(_ base: any ResponseBodySink, count: RefusalCount) {
        self.base = base
        self.count = count
    }

    func receive(_ head: ResponseHead) throws { try base.receive(head) }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool {
        guard try base.offer(bytes) else {
            count.add()
            return false
        }
        return true
    }

    func whenReady(_ resume: @escaping @Sendable () -> Void) { base.whenReady(resume) }

    var needsBackPressure: Bool { base.needsBackPressure }
}
