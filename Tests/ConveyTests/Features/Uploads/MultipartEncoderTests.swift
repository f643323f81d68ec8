import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Hands out the given boundaries in order, then repeats the last one.
final class BoundarySequence: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: [String]

    init(_ boundaries: [String]) { remaining = boundaries }

    func next() -> String {
        lock.withLock { remaining.count > 1 ? remaining.removeFirst() : remaining[0] }
    }
}

@Suite("Multipart encoding")
struct MultipartEncoderTests {
    let scratch: ScratchDirectory

    init() throws { scratch = try ScratchDirectory() }

    private func encoder(_ parts: [MIMEPart], boundaries: [String] = ["BOUNDARY"],
                         compression: UploadCompression = .none) -> MultipartEncoder {
        let sequence = BoundarySequence(boundaries)
        return MultipartEncoder(parts: parts, compression: compression, stagingDirectory: scratch.url,
                                makeBoundary: { sequence.next() })
    }

    private func inMemory(_ body: RequestBody) throws -> Data {
        guard case .data(let data) = body.content else { throw ConveyError.upload("test", "expected an in-memory body") }
        return data
    }

    private func staged(_ body: RequestBody) throws -> URL {
        guard case .file(let file, let removeWhenDone) = body.content, removeWhenDone else {
            throw ConveyError.upload("test", "expected a staged body")
        }
        return file
    }

    @Test func framesPartsWithExactCRLFs() async throws {
        defer { scratch.remove() }
        let body = try await encoder([
            MIMEPart(name: "caption", stringValue: "Hi"),
            MIMEPart(name: "blob", data: Data([0x00, 0x0D, 0x0A, 0xFF]), filename: "b.bin"),
        ]).requestBody()
        let expected = Data("--BOUNDARY\r\nContent-Disposition: form-data; name=\"caption\"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHi\r\n".utf8)
            + Data("--BOUNDARY\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            + Data([0x00, 0x0D, 0x0A, 0xFF]) + Data("\r\n--BOUNDARY--\r\n".utf8)
        #expect(try inMemory(body) == expected)
        #expect(body.contentType == "multipart/form-data; boundary=BOUNDARY")
        #expect(body.contentEncoding == nil)
    }

    @Test func escapesQuotesAndLineBreaksInNamesAndKeepsUnicode() async throws {
        defer { scratch.remove() }
        let body = try await encoder([
            MIMEPart(name: "a\"b\r\nc\nd", data: Data("x".utf8), filename: "naïve \"photo\"\r.jpg", mimeType: "image/jpeg"),
        ]).requestBody()
        let text = try #require(String(data: try inMemory(body), encoding: .utf8))
        #expect(text.contains("Content-Disposition: form-data; name=\"a%22b%0D%0Ac%0Ad\"; filename=\"naïve %22photo%22%0D.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nx\r\n"))
    }

    @Test func randomBoundariesAreShortAndNeedNoQuoting() {
        let boundaries = Set((0..<50).map { _ in MultipartBoundary.random() })
        #expect(boundaries.count == 50)
        for boundary in boundaries {
            #expect((1...70).contains(boundary.count))
            #expect(boundary.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        }
    }

    @Test func skipsABoundaryThatOccursInMemoryContent() async throws {
        defer { scratch.remove() }
        let body = try await encoder([MIMEPart(name: "text", stringValue: "line\r\n--AAA\r\nmore")],
                                     boundaries: ["AAA", "BBB"]).requestBody()
        #expect(body.contentType == "multipart/form-data; boundary=BBB")
        #expect(String(data: try inMemory(body), encoding: .utf8)?.hasPrefix("--BBB\r\n") == true)
    }

    @Test func restartsStagingWhenAFileContainsTheBoundary() async throws {
        defer { scratch.remove() }
        let file = try scratch.file("tricky.txt", testBytes(count: 600_000, seed: 3) + Data("\r\n--AAA--\r\n".utf8))
        let body = try await encoder([MIMEPart(name: "upload", fileURL: file)], boundaries: ["AAA", "BBB"]).requestBody()
        #expect(body.contentType == "multipart/form-data; boundary=BBB")
        let stagedFile = try staged(body)
        #expect(try scratch.stagedFiles() == [stagedFile.lastPathComponent])
        let bytes = try Data(contentsOf: stagedFile)
        #expect(bytes.starts(with: Data("--BBB\r\n".utf8)))
        #expect(bytes.range(of: try Data(contentsOf: file)) != nil)
    }

    @Test func scannerFindsABoundarySplitAcrossChunks() {
        var scanner = BoundaryScanner(boundary: "--XYZ")
        let found = ["abc-", "-X", "Zq--XY", "Z"].map { scanner.occurs(in: Data($0.utf8)) }
        #expect(found == [false, false, false, true])
    }

    @Test func failsWhenEveryBoundaryOccursInTheContent() async throws {
        defer { scratch.remove() }
        let error = await #expect(throws: ConveyError.self) {
            try await encoder([MIMEPart(name: "text", stringValue: "AAA")], boundaries: ["AAA"]).requestBody()
        }
        #expect(error?.encodingFailure?.subject == "the multipart body")
    }

    @Test func rejectsAnEmptyPayload() async throws {
        defer { scratch.remove() }
        let error = await #expect(throws: ConveyError.self) { try await encoder([]).requestBody() }
        #expect(error?.encodingFailure?.reason.contains("no parts") == true)
    }

    @Test func rejectsAMIMETypeThatWouldInjectAHeader() async throws {
        defer { scratch.remove() }
        let error = await #expect(throws: ConveyError.self) {
            try await encoder([MIMEPart(name: "evil", data: Data(), mimeType: "text/plain\r\nX-Injected: 1")]).requestBody()
        }
        #expect(error?.encodingFailure?.subject == "multipart part \"evil\"")
    }

    @Test func stagesFilePartsWithTheSameBytesAsInMemoryParts() async throws {
        defer { scratch.remove() }
        let content = testBytes(count: 300_000, seed: 11)
        let file = try scratch.file("photo.jpg", content)
        let fromMemory = try await encoder([
            MIMEPart(name: "photo", data: content, filename: "photo.jpg", mimeType: "image/jpeg"),
            MIMEPart(name: "caption", stringValue: "beach"),
        ]).requestBody()
        let fromFile = try await encoder([
            MIMEPart(name: "photo", fileURL: file, mimeType: "image/jpeg"),
            MIMEPart(name: "caption", stringValue: "beach"),
        ]).requestBody()
        #expect(try Data(contentsOf: staged(fromFile)) == inMemory(fromMemory))
    }

    @Test func stagesLargeInMemoryBodies() async throws {
        defer { scratch.remove() }
        let body = try await encoder([MIMEPart(name: "big", data: Data(count: Int(MultipartEncoder.stagingThreshold)))]).requestBody()
        #expect(try FileManager.default.fileExists(atPath: staged(body).path(percentEncoded: false)))
    }

    @Test func gzipsWhenTheBodyReachesTheMinimumSize() async throws {
        defer { scratch.remove() }
        let parts = [MIMEPart(name: "text", stringValue: String(repeating: "compressible ", count: 200))]
        let plain = try await encoder(parts).requestBody()
        let small = try await encoder(parts, compression: .gzip(minimumSize: 1_000_000)).requestBody()
        let gzipped = try await encoder(parts, compression: .gzip(minimumSize: 100)).requestBody()
        #expect(small.contentEncoding == nil)
        #expect(try inMemory(small) == inMemory(plain))
        #expect(gzipped.contentEncoding == "gzip")
        #expect(try inMemory(gzipped).count < inMemory(plain).count / 4)
        #expect(try gunzip(inMemory(gzipped)) == inMemory(plain))
    }

    @Test func gzipsStagedBodiesAsTheyAreWritten() async throws {
        defer { scratch.remove() }
        let file = try scratch.randomFile("data.bin", size: 700_000)
        let parts = [MIMEPart(name: "file", fileURL: file), MIMEPart(name: "note", stringValue: "n")]
        let plain = try await encoder(parts).requestBody()
        let gzipped = try await encoder(parts, compression: .gzip(minimumSize: 1)).requestBody()
        #expect(gzipped.contentEncoding == "gzip")
        #expect(try gunzip(Data(contentsOf: staged(gzipped))) == Data(contentsOf: staged(plain)))
    }

    @Test func namesAVanishedFilePart() async throws {
        defer { scratch.remove() }
        let file = scratch.url.appending(path: "gone.jpg")
        let error = await #expect(throws: ConveyError.self) {
            try await encoder([MIMEPart(name: "avatar", fileURL: file)]).requestBody()
        }
        let failure = try #require(error?.encodingFailure)
        #expect(failure.subject.hasPrefix("multipart part \"avatar\" (file "))
        #expect(failure.reason == "the file does not exist")
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func namesADirectoryGivenAsAFilePart() async throws {
        defer { scratch.remove() }
        let error = await #expect(throws: ConveyError.self) {
            try await encoder([MIMEPart(name: "folder", fileURL: scratch.url)]).requestBody()
        }
        #expect(error?.encodingFailure?.reason == "it is a directory, not a regular file")
    }

    @Test func cancellationWhileStagingRemovesTheStagedFile() async throws {
        defer { scratch.remove() }
        let file = try scratch.randomFile("big.bin", size: 3 << 20)
        let encoder = encoder([MIMEPart(name: "file", fileURL: file)])
        let result = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await encoder.requestBody()
        }.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try scratch.stagedFiles().isEmpty)
    }
}
