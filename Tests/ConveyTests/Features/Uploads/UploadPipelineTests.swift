import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Upload bodies through the whole pipeline, against stub transports: what is sent, what is
/// refused before sending, and what is left on disk afterwards.
@Suite("Upload pipeline")
@ConveyActor
struct UploadPipelineTests {
    let scratch: ScratchDirectory

    init() throws { scratch = try ScratchDirectory() }

    struct Reading: Encodable, Sendable { let value: Double }

    @Test func bodyOnGETOrHEADIsRefusedBeforeSending() async throws {
        defer { scratch.remove() }
        let log = EventLog()
        let server = try stubServer(.answering(log: log))
        let json = await #expect(throws: ConveyError.self) {
            try await JSONUpload(server: server, method: .get, uploadPayload: ["a": 1]).send()
        }
        #expect(json?.encodingFailure?.reason.contains("GET requests cannot carry a body") == true)
        let form = await #expect(throws: ConveyError.self) {
            try await FormUpload(server: server, method: .head, uploadPayload: ["a": "b"]).send()
        }
        #expect(form?.encodingFailure?.reason.contains("HEAD requests cannot carry a body") == true)
        let file = try scratch.file("f.bin", Data([1]))
        _ = await #expect(throws: ConveyError.self) {
            try await MIMEUpload(server: server, method: .get, uploadPayload: MIMEPayload(parts: [MIMEPart(name: "f", fileURL: file)]),
                                 stagingDirectory: scratch.url).send()
        }
        #expect(log.events.isEmpty)
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func valueThatDoesNotEncodeFailsNamingThePlace() async throws {
        defer { scratch.remove() }
        let log = EventLog()
        let server = try stubServer(.answering(log: log))
        let error = await #expect(throws: ConveyError.self) {
            try await JSONUpload(server: server, uploadPayload: ["reading": Reading(value: .nan)]).send()
        }
        let failure = try #require(error?.encodingFailure)
        #expect(failure.subject.contains("reading.value"))
        #expect(failure.reason.localizedCaseInsensitiveContains("nan"))
        #expect(log.events.isEmpty)
    }

    @Test func vanishedOrUnreadableFilesFailBeforeSending() async throws {
        defer { scratch.remove() }
        let log = EventLog()
        let server = try stubServer(.answering(log: log))
        let missing = scratch.url.appending(path: "missing.bin")
        let part = await #expect(throws: ConveyError.self) {
            try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
                MIMEPart(name: "caption", stringValue: "c"), MIMEPart(name: "avatar", fileURL: missing),
            ]), stagingDirectory: scratch.url).send()
        }
        #expect(part?.encodingFailure?.subject == "multipart part \"avatar\" (file \(missing.path(percentEncoded: false)))")
        #expect(part?.encodingFailure?.reason == "the file does not exist")
        let file = await #expect(throws: ConveyError.self) {
            try await FileUpload(server: server, uploadPayload: missing, stagingDirectory: scratch.url).send()
        }
        #expect(file?.encodingFailure?.subject == "the upload file \(missing.path(percentEncoded: false))")
        let directory = await #expect(throws: ConveyError.self) {
            try await FileUpload(server: server, uploadPayload: scratch.url, stagingDirectory: scratch.url).send()
        }
        #expect(directory?.encodingFailure?.reason == "it is a directory, not a regular file")
        #expect(log.events.isEmpty)
    }

    /// Whether file permissions stop this process from reading a file (they do not for root).
    nonisolated static let permissionsApply: Bool = {
        let file = FileManager.default.temporaryDirectory.appending(path: "convey-permission-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        guard FileManager.default.createFile(atPath: file.path(percentEncoded: false), contents: Data([1]),
                                             attributes: [.posixPermissions: 0]) else { return false }
        return !FileManager.default.isReadableFile(atPath: file.path(percentEncoded: false))
    }()

    @Test(.enabled(if: permissionsApply, "the process reads any file (root)"))
    func unreadableFileFailsBeforeSending() async throws {
        defer { scratch.remove() }
        let log = EventLog()
        let server = try stubServer(.answering(log: log))
        let file = try scratch.file("secret.bin", Data([1]))
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path(percentEncoded: false))
        let error = await #expect(throws: ConveyError.self) {
            try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [MIMEPart(name: "secret", fileURL: file)]),
                                 stagingDirectory: scratch.url).send()
        }
        #expect(error?.encodingFailure?.reason == "it is not readable")
        #expect(log.events.isEmpty)
    }

    @Test func missingStagingDirectoryFailsBeforeSending() async throws {
        defer { scratch.remove() }
        let log = EventLog()
        let server = try stubServer(.answering(log: log))
        let nowhere = scratch.url.appending(path: "missing", directoryHint: .isDirectory)
        let error = await #expect(throws: ConveyError.self) {
            try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
                MIMEPart(name: "f", fileURL: try scratch.file("a.txt", Data("a".utf8))),
            ]), stagingDirectory: nowhere).send()
        }
        #expect(error?.encodingFailure?.subject.hasPrefix("the staged request body in ") == true)
        #expect(error?.encodingFailure?.reason == "the staging directory does not exist")
        #expect(log.events.isEmpty)
    }

    @Test func everyKindSendsItsContentType() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        try await JSONUpload(server: server, uploadPayload: ["a": 1]).send()
        try await FormUpload(server: server, uploadPayload: ["a": "b"]).send()
        try await DataUpload(server: server, uploadPayload: Data([1, 2]), contentType: "image/png").send()
        try await FileUpload(server: server, uploadPayload: try scratch.file("doc.pdf", Data("%PDF".utf8)),
                             contentType: "application/pdf", stagingDirectory: scratch.url).send()
        try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [MIMEPart(name: "a", stringValue: "b")]),
                             stagingDirectory: scratch.url).send()
        let types = seen.requests.map { $0.request.value(forHTTPHeaderField: "Content-Type") ?? "none" }
        #expect(types.count == 5)
        #expect(Array(types.prefix(4)) == ["application/json", "application/x-www-form-urlencoded", "image/png", "application/pdf"])
        #expect((try types.required(4)).hasPrefix("multipart/form-data; boundary=convey-"))
        #expect(seen.requests.allSatisfy { $0.request.value(forHTTPHeaderField: "Content-Encoding") == nil })
    }

    @Test func fileUploadStreamsTheFileItselfAndKeepsIt() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        let file = try scratch.file("keep.bin", testBytes(count: 1000, seed: 5))
        try await FileUpload(server: server, uploadPayload: file, stagingDirectory: scratch.url).send()
        #expect(seen.last?.bodyFile == file)
        #expect(seen.last?.request.body == nil)
        #expect(FileManager.default.fileExists(atPath: file.path(percentEncoded: false)))
    }

    @Test func stagedBodyIsRemovedAfterSuccess() async throws {
        defer { scratch.remove() }
        let existedWhileSending = EventLog()
        let server = try stubServer(StubTransport { request in
            let file = try #require(request.bodyFile)
            existedWhileSending.add("\(FileManager.default.fileExists(atPath: file.path(percentEncoded: false)))")
            return TransportResponse(url: request.request.url, statusCode: 200)
        })
        try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
            MIMEPart(name: "f", fileURL: try scratch.file("a.txt", Data("hello".utf8))),
        ]), stagingDirectory: scratch.url).send()
        #expect(existedWhileSending.events == ["true"])
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func stagedBodyIsRemovedAfterAFailedAttemptAndEachRetry() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(StubTransport { request in
            seen.add(request)
            throw URLError(.networkConnectionLost)
        })
        struct RetryingUpload: MIMEUploadingTask {
            let server: ConveyServer
            var path: String { "upload" }
            var method: HTTPMethod { .post }
            let uploadPayload: MIMEPayload?
            let stagingDirectory: URL
            func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 3 ? 0 : nil }
        }
        let file = try scratch.file("a.txt", Data("hello".utf8))
        await #expect(throws: ConveyError.self) {
            try await RetryingUpload(server: server, uploadPayload: MIMEPayload(parts: [MIMEPart(name: "f", fileURL: file)]),
                                     stagingDirectory: scratch.url).send()
        }
        let staged = seen.requests.compactMap(\.bodyFile)
        #expect(staged.count == 3)
        #expect(Set(staged).count == 3)
        #expect(staged.allSatisfy { !FileManager.default.fileExists(atPath: $0.path(percentEncoded: false)) })
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func stagedBodyIsRemovedWhenTheUploadIsCancelled() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(StubTransport { request in
            seen.add(request)
            try await Task.sleep(for: .seconds(60))
            throw URLError(.timedOut)
        })
        let task = MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
            MIMEPart(name: "f", fileURL: try scratch.randomFile("big.bin", size: 1 << 20)),
        ]), stagingDirectory: scratch.url)
        let run = Task { try await task.send() }
        for _ in 0..<1000 where seen.last == nil { try await Task.sleep(for: .milliseconds(10)) }
        let staged = try #require(seen.last?.bodyFile)
        #expect(FileManager.default.fileExists(atPath: staged.path(percentEncoded: false)))
        run.cancel()
        let error = await #expect(throws: ConveyError.self) { try await run.value }
        #expect(error?.isCancellation == true)
        #expect(!FileManager.default.fileExists(atPath: staged.path(percentEncoded: false)))
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func gzipAppliesFromTheMinimumSizeOn() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        let small = ["short"]
        let large = Array(repeating: "a fairly repetitive line of text", count: 100)
        try await JSONUpload(server: server, uploadPayload: small, uploadGzipMinimumSize: 200).send()
        try await JSONUpload(server: server, uploadPayload: large, uploadGzipMinimumSize: 200).send()
        let (plain, compressed) = (try #require(seen.requests.first), try #require(seen.last))
        #expect(plain.request.value(forHTTPHeaderField: "Content-Encoding") == nil)
        #expect(try sentBody(plain) == JSONEncoder().encode(small))
        #expect(compressed.request.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
        #expect(compressed.request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(try gunzip(sentBody(compressed)) == JSONEncoder().encode(large))
    }

    @Test func serverDefaultCompressionAppliesToTasksThatDoNotChoose() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen)) { $0.uploadGzipMinimumSize = 0 }
        try await DefaultCompressionUpload(server: server, uploadPayload: ["x"]).send()
        try await JSONUpload(server: server, uploadPayload: ["x"], uploadGzipMinimumSize: nil).send()
        let encodings = seen.requests.map { $0.request.value(forHTTPHeaderField: "Content-Encoding") }
        #expect(encodings == ["gzip", nil])
        #expect(try gunzip(sentBody(try #require(seen.requests.first))) == Data(#"["x"]"#.utf8))
    }

    @Test func gzippedFileUploadIsStagedAndRemoved() async throws {
        defer { scratch.remove() }
        let bodies = EventLog()
        let server = try stubServer(StubTransport { request in
            let file = try #require(request.bodyFile)
            bodies.add(String(decoding: try gunzip(Data(contentsOf: file)), as: UTF8.self))
            bodies.add(request.request.value(forHTTPHeaderField: "Content-Encoding") ?? "none")
            return TransportResponse(url: request.request.url, statusCode: 200)
        })
        let text = String(repeating: "log line\n", count: 5000)
        let file = try scratch.file("app.log", Data(text.utf8))
        try await FileUpload(server: server, uploadPayload: file, contentType: "text/plain", stagingDirectory: scratch.url,
                             uploadGzipMinimumSize: 1024).send()
        #expect(bodies.events == [text, "gzip"])
        #expect(try scratch.stagedFiles().isEmpty)
        #expect(FileManager.default.fileExists(atPath: file.path(percentEncoded: false)))
    }

    @Test func progressRelayReportsOnlyUploadChanges() async {
        let log = ProgressLog()
        let relay = UploadProgressRelay { log.add($0) }
        relay.report(TransferProgress(bytesReceived: 10))
        relay.report(TransferProgress(bytesSent: 100, totalBytesToSend: 300))
        relay.report(TransferProgress(bytesSent: 100, totalBytesToSend: 300, bytesReceived: 50))
        relay.report(TransferProgress(bytesSent: 300, totalBytesToSend: 300))
        await relay.drained()
        // Reports reach the handler on the relay's queue; one slower than the transfer sees the latest.
        let expected = [UploadProgress(bytesSent: 100, totalBytes: 300), UploadProgress(bytesSent: 300, totalBytes: 300)]
        #expect(log.reports == expected || log.reports == [expected[1]])
        #expect(log.reports.last?.fractionCompleted == 1)
        #expect(UploadProgress(bytesSent: 5, totalBytes: nil).fractionCompleted == nil)
    }

    @Test func progressHandlerReachesTheTransportOnlyForUploadsThatAskForIt() async throws {
        defer { scratch.remove() }
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        let log = ProgressLog()
        let file = try scratch.file("p.bin", Data([1, 2, 3]))
        try await FileUpload(server: server, uploadPayload: file, stagingDirectory: scratch.url, uploadProgressHandler: { log.add($0, $1) }).send()
        try await FileUpload(server: server, uploadPayload: file, stagingDirectory: scratch.url).send()
        let (watched, unwatched) = (try #require(seen.requests.first), try #require(seen.last))
        #expect(unwatched.progress == nil)
        let progress = try #require(watched.progress)
        progress(TransferProgress(bytesSent: 3, totalBytesToSend: 3))
        // The handler runs on the relay's own queue, never the transport's thread.
        try await waitUntil("the handler saw the report") { !log.reports.isEmpty }
        #expect(log.reports == [UploadProgress(bytesSent: 3, totalBytes: 3)])
    }
}
