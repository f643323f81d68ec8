import Foundation

/// Reads a HAR file (Convey's, a browser's, mitmproxy's, Charles's) into fixtures, treating it as
/// untrusted input: at most `HARAppender.maximumFileSize` bytes, opened only as a regular file
/// and never through a link, and every problem a `HARError` that says where (`ConveyError.harFileUnusable` to apps).
///
/// What is read: each entry's request method, URL and body (`postData.text`, in base64 when its
/// `_encoding` or `encoding` says so), and its response status, HTTP version, headers in order
/// and body (`content.text`, base64 when `content.encoding` says so). An entry without a response
/// (status 0, or none) answers with the failure its `_convey.failure` (or a browser's `_error`)
/// names; one with a response and a `_convey.failure` (a body cut short) delivers the response,
/// then fails. Everything else (timings, cookies lists, sizes, pages, cache) is ignored: the headers
/// carry the cookies. Entries whose URL is not http(s), and entries recording a cancellation,
/// never match and are counted as skipped.
enum HARFixtureReader {
    /// The fixtures of the file at `path`, in file order, and how many entries were skipped;
    /// `nil` when there is no file.
    static func read(path: String) throws(HARError) -> (fixtures: [HARFixture], skipped: Int)? {
        let bytes: [UInt8]?
        do throws(FileFailure) {
            bytes = try OwnerOnlyFiles.read(atPath: path, limit: HARAppender.maximumFileSize)
        } catch {
            throw HARError.unreadableFile(path: path, reason: error.reason)
        }
        guard let bytes else { return nil }
        return try fixtures(from: Data(bytes), path: path)
    }

    /// The fixtures of a HAR document.
    static func fixtures(from data: Data, path: String) throws(HARError) -> (fixtures: [HARFixture], skipped: Int) {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            throw invalid(error, path: path)
        } catch {
            throw HARError.invalidFile(path: path, location: "(document)", reason: String(describing: error))
        }
        var fixtures: [HARFixture] = []
        var skipped = 0
        for (position, entry) in document.log.entries.enumerated() {
            if let fixture = try fixture(entry, position: position, path: path) {
                fixtures.append(fixture)
            } else {
                skipped += 1
            }
        }
        return (fixtures, skipped)
    }

    /// The fixture a written entry reads back as: what record mode adds to its store, exactly as a
    /// later run reads it from the file.
    static func fixture(of entry: HAREntry, position: Int, path: String) throws(HARError) -> HARFixture? {
        var json = HARJSONWriter(indent: 0)
        json.beginObject()
        json.key("log")
        json.beginObject()
        json.key("entries")
        json.beginArray()
        entry.write(to: &json)
        json.endArray()
        json.endObject()
        json.endObject()
        guard let fixture = try fixtures(from: Data(json.bytes), path: path).fixtures.first else { return nil }
        return HARFixture(position: position, name: fixture.name, key: fixture.key, body: fixture.body, answer: fixture.answer)
    }

    private static func fixture(_ entry: Entry, position: Int, path: String) throws(HARError) -> HARFixture? {
        let place = "log.entries[\(position)]"
        guard let key = HARRequestKey(method: entry.request.method, url: entry.request.url) else { return nil }
        var body: Data?
        if let postData = entry.request.postData, let text = postData.text {
            let encoding = postData.privateEncoding ?? postData.encoding
            body = try decoded(text, encoding: encoding, location: place + ".request.postData.text", path: path)
        }
        let answer: HARFixture.Answer
        if let response = entry.response, response.status > 0 {
            guard (100...999).contains(response.status) else {
                throw HARError.invalidFile(path: path, location: place + ".response.status", reason: "\(response.status) is not an HTTP status")
            }
            var fields = Headers()
            for header in response.headers ?? [] where !header.name.isEmpty && !header.name.hasPrefix(":") {
                fields.appendLine(Header(name: header.name, value: header.value ?? ""))
            }
            let content = try response.content?.text.map { text throws(HARError) in
                try decoded(text, encoding: response.content?.encoding, location: place + ".response.content.text", path: path)
            } ?? Data()
            let head = ResponseHead(statusCode: response.status, httpVersion: HARFixture.httpVersion(response.httpVersion), fields: fields,
                                    url: URL(fileURLWithPath: "/"))
            answer = .response(head, body: content, failure: entry.convey?.failure.map { ($0.kind, $0.message ?? $0.kind) })
        } else {
            let failure = entry.convey?.failure
            guard failure?.kind != "cancelled" else { return nil }
            answer = .failure(kind: failure?.kind ?? TransportFailure.connectionLost.rawValue,
                              message: failure?.message ?? entry.error ?? "the entry holds no response")
        }
        return HARFixture(position: position, name: entry.request.method + " " + entry.request.url, key: key, body: body, answer: answer)
    }

    private static func decoded(_ text: String, encoding: String?, location: String, path: String) throws(HARError) -> Data {
        switch encoding?.lowercased() {
        case nil, "": return Data(text.utf8)
        case "base64":
            guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                throw HARError.invalidFile(path: path, location: location, reason: "not valid base64")
            }
            return data
        case let other?:
            throw HARError.invalidFile(path: path, location: location, reason: "unknown encoding '\(other.prefix(40))' (only base64 is defined)")
        }
    }

    /// `log.entries[3].response.status: expected Int` from a decoding error.
    private static func invalid(_ error: DecodingError, path: String) -> HARError {
        func location(_ codingPath: [any CodingKey]) -> String {
            guard !codingPath.isEmpty else { return "(document)" }
            return codingPath.reduce(into: "") { text, key in
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            return .invalidFile(path: path, location: location(context.codingPath), reason: "expected \(type)")
        case .valueNotFound(let type, let context):
            return .invalidFile(path: path, location: location(context.codingPath), reason: "expected \(type), found null")
        case .keyNotFound(let key, let context):
            return .invalidFile(path: path, location: location(context.codingPath + [key]), reason: "missing")
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { String(describing: $0) } ?? context.debugDescription
            return .invalidFile(path: path, location: location(context.codingPath), reason: "not valid JSON: \(underlying.prefix(200))")
        @unknown default:
            return .invalidFile(path: path, location: "(document)", reason: String(describing: error).prefix(200).description)
        }
    }

    // MARK: - The parts of HAR 1.2 that replay reads; everything else is ignored.

    private struct Document: Decodable {
        let log: Log
    }

    private struct Log: Decodable {
        let entries: [Entry]
    }

    private struct Entry: Decodable {
        let request: Request
        let response: Response?
        let convey: ConveyFields?
        /// A browser's reason for an entry without a response (Chrome's `_error`).
        let error: String?

        enum CodingKeys: String, CodingKey {
            case request, response
            case convey = "_convey"
            case error = "_error"
        }
    }

    private struct Request: Decodable {
        let method: String
        let url: String
        let postData: PostData?
    }

    private struct PostData: Decodable {
        let text: String?
        let encoding: String?
        /// Convey's (and some tools') `_encoding: "base64"` for a body that is not text.
        let privateEncoding: String?

        enum CodingKeys: String, CodingKey {
            case text, encoding
            case privateEncoding = "_encoding"
        }
    }

    private struct Response: Decodable {
        let status: Int
        let httpVersion: String?
        let headers: [NameValue]?
        let content: Content?
    }

    private struct NameValue: Decodable {
        let name: String
        let value: String?
    }

    private struct Content: Decodable {
        let text: String?
        let encoding: String?
    }

    private struct ConveyFields: Decodable {
        let failure: Failure?
    }

    private struct Failure: Decodable {
        let kind: String
        let message: String?
    }
}
