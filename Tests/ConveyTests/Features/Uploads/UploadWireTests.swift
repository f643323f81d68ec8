import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Uploads against the local httpbin, which parses what arrives and echoes it back.
@Suite("Uploads on the wire", .wire)
@ConveyActor
struct UploadWireTests {
    let scratch: ScratchDirectory

    init() throws { scratch = try ScratchDirectory() }

    struct Note: Codable, Sendable, Equatable {
        let title: String
        let body: String
        let tags: [String]
    }

    private func echo(_ response: ServerResponse<Data>) throws -> HTTPBinEcho {
        try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
    }

    /// The bytes of an httpbin `data:…;base64,…` echo.
    private func dataURLBytes(_ text: String?) throws -> Data {
        let text = try #require(text)
        let marker = try #require(text.range(of: ";base64,"), "not a base64 data URL: \(text.prefix(60))")
        return try #require(Data(base64Encoded: String(text[marker.upperBound...])))
    }

    @Test func jsonWithUnicodeAndEscapesArrivesIntact() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let note = Note(title: "Grüße, 日本語 & emoji 🚀", body: "quote \" backslash \\ slash / tab \t newline \n control \u{01} nul-free",
                        tags: ["", "ü", "\u{2028}"])
        let response = try await JSONUpload(server: server, path: "post", uploadPayload: note).download()
        let echoed = try echo(response)
        #expect(echoed.headers["Content-Type"] == "application/json")
        #expect(echoed.json == .object(["title": .string(note.title), "body": .string(note.body),
                                        "tags": .array(note.tags.map(JSONValue.string))]))
        #expect(echoed.headers["Content-Length"] == String(try JSONCoding.makeEncoder().encode(note).count))
    }

    @Test func formFieldsWithEveryAwkwardCharacterArriveIntact() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let fields = ["space": "a b", "amp&": "x&y", "eq=": "1=2", "plus+": "1+1", "percent%": "100%",
                      "unicode é": "日本 🚀", "empty": "", "newline": "a\r\nb", "symbols": "*-._~!'()#?/"]
        for (method, path) in [(HTTPMethod.post, "post"), (.put, "put")] {
            let response = try await FormUpload(server: server, path: path, method: method, uploadPayload: fields).download()
            let echoed = try echo(response)
            #expect(echoed.form == fields, "\(method)")
            #expect(echoed.headers["Content-Type"] == "application/x-www-form-urlencoded")
        }
    }

    @Test func multipartTextAndBinaryPartsArriveIntact() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let tricky = "--not a boundary\r\n--convey-00000000000000000000000000000000\r\nline\rthree\n-- end --\r\n"
        let binary = Data((0...255).map(UInt8.init) + (0...255).reversed().map(UInt8.init))
        let file = try scratch.file("report ü.txt", Data("file text\r\n--\r\n".utf8))
        let response = try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
            MIMEPart(name: "tricky", stringValue: tricky),
            MIMEPart(name: "binary", data: binary, filename: "say \"cheese\" 日本.bin"),
            MIMEPart(name: "ünï code", stringValue: "värde"),
            MIMEPart(name: "empty", stringValue: ""),
            MIMEPart(name: "report", fileURL: file, mimeType: "text/plain"),
        ]), stagingDirectory: scratch.url).download()
        let echoed = try echo(response)
        #expect(echoed.form == ["tricky": tricky, "ünï code": "värde", "empty": ""])
        #expect(try dataURLBytes(echoed.files?["binary"]) == binary)
        #expect(echoed.files?["report"] == "file text\r\n--\r\n")
        #expect(echoed.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=convey-") == true)
        #expect(try scratch.stagedFiles().isEmpty)
    }

    /// Names travel escaped as browsers send them; werkzeug (httpbin's parser) turns `%22` back
    /// into a quote and leaves `%0D%0A` as it came.
    @Test func quotesAndLineBreaksInNamesTravelEscaped() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let response = try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
            MIMEPart(name: "say \"hi\"", stringValue: "value"),
            MIMEPart(name: "two\r\nlines", data: Data("x".utf8), filename: "a\"b.txt", mimeType: "text/plain"),
        ]), stagingDirectory: scratch.url).download()
        let echoed = try echo(response)
        #expect(echoed.form == ["say \"hi\"": "value"])
        #expect(echoed.files == ["two%0D%0Alines": "x"])
    }

    @Test func largeFileStreamsWithMatchingSizeAndContent() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let size = 20 << 20
        let file = try scratch.randomFile("large.bin", size: size)
        let log = ProgressLog()
        let response = try await FileUpload(server: server, uploadPayload: file, stagingDirectory: scratch.url,
                                             uploadProgressHandler: { log.add($0, $1) }).download()
        let echoed = try echo(response)
        #expect(echoed.headers["Content-Length"] == String(size))
        #expect(try dataURLBytes(echoed.data) == Data(contentsOf: file))
        let reports = log.reports
        #expect(reports.last == UploadProgress(bytesSent: Int64(size), totalBytes: Int64(size)))
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent })
    }

    @Test func largeFilePartStreamsWithMatchingContent() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let file = try scratch.randomFile("part.bin", size: 6 << 20)
        let response = try await MIMEUpload(server: server, uploadPayload: MIMEPayload(parts: [
            MIMEPart(name: "upload", fileURL: file), MIMEPart(name: "kind", stringValue: "random"),
        ]), stagingDirectory: scratch.url).download()
        let echoed = try echo(response)
        #expect(echoed.form == ["kind": "random"])
        #expect(try dataURLBytes(echoed.files?["upload"]) == Data(contentsOf: file))
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func gzippedBodiesArriveCompressedAndDecompressToTheOriginal() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let note = Note(title: "compressed", body: String(repeating: "the same words again ", count: 500), tags: ["gzip"])
        let json = try await JSONUpload(server: server, uploadPayload: note, uploadGzipMinimumSize: 1024).download()
        let jsonEcho = try echo(json)
        let sent = try dataURLBytes(jsonEcho.data)
        #expect(jsonEcho.headers["Content-Encoding"] == "gzip")
        #expect(jsonEcho.headers["Content-Length"] == String(sent.count))
        #expect(sent.count < 1024)
        #expect(try JSONDecoder().decode(Note.self, from: gunzip(sent)) == note)

        // A file staged gzipped. (httpbin parses multipart and form bodies without decompressing
        // them, so those are checked byte for byte against stubs instead.)
        let text = String(repeating: "line of a log file\n", count: 20_000)
        let file = try scratch.file("app.log", Data(text.utf8))
        let upload = try await FileUpload(server: server, uploadPayload: file, contentType: "text/plain", stagingDirectory: scratch.url,
                                          uploadGzipMinimumSize: 1024).download()
        let fileEcho = try echo(upload)
        #expect(fileEcho.headers["Content-Encoding"] == "gzip")
        #expect(fileEcho.headers["Content-Type"] == "text/plain")
        #expect(try gunzip(dataURLBytes(fileEcho.data)) == Data(text.utf8))
        #expect(try scratch.stagedFiles().isEmpty)
    }

    @Test func rawBytesCarryTheirContentTypeAndLength() async throws {
        defer { scratch.remove() }
        let server = try httpbinServer()
        let bytes = testBytes(count: 70_000, seed: 9)
        let response = try await DataUpload(server: server, method: .put, uploadPayload: bytes, contentType: "image/webp").download()
        let echoed = try echo(response)
        #expect(echoed.method == "PUT")
        #expect(echoed.headers["Content-Type"] == "image/webp")
        #expect(echoed.headers["Content-Length"] == "70000")
        #expect(try dataURLBytes(echoed.data) == bytes)
    }
}
