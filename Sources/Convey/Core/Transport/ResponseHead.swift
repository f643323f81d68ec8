import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The head of a response, before its body: status, version, fields as received, final URL.
///
/// Plain values, cheap to make: what `didReceiveResponse(response:data:)` gets. The fields stay
/// as the transport received them, in one piece of text, until something reads them: most
/// responses are never asked for more than a field or two. An `HTTPURLResponse` is built from it
/// only when asked for (`httpURLResponse`). The accessors named like `HTTPURLResponse`'s let a
/// hook written for one read a head unchanged.
public struct ResponseHead: Sendable, Hashable {
    /// The status code.
    public var statusCode: Int
    /// The protocol version as a status line spells it: `HTTP/1.1`, `HTTP/2`.
    public var httpVersion: String
    /// The URL this response answers: its request's (after redirects, the last hop's target).
    public var url: URL
    private var storage: FieldStorage

    /// Creates a response head: for an `Interceptor` that answers a request itself, and for transports.
    public init(statusCode: Int, httpVersion: String = "HTTP/1.1", fields: Headers = Headers(), url: URL) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.url = url
        storage = .parsed(fields)
    }

    /// A head whose fields are `text` as a transport collected it: one `name:value` line per
    /// field, in order, each ended by `\n`, names checked and values trimmed.
    init(statusCode: Int, httpVersion: String, fieldLines text: String, url: URL) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.url = url
        storage = .lines(text)
    }

    /// The head of a Foundation response: its fields as Foundation combined them.
    init(_ response: HTTPURLResponse, url: URL? = nil) {
        var fields = Headers()
        for (name, value) in response.allHeaderFields {
            fields.appendLine(Header(name: String(describing: name), value: String(describing: value)))
        }
        self.init(statusCode: response.statusCode, fields: fields,
                  url: response.url ?? url ?? URL(fileURLWithPath: "/"))
    }

    /// The header fields in order, repeats kept.
    public var fields: Headers {
        get {
            switch storage {
            case .parsed(let fields): fields
            case .lines(let text): Self.parse(text)
            }
        }
        set { storage = .parsed(newValue) }
    }

    /// The value of the field with this name (case-insensitive), repeats joined as
    /// `HTTPURLResponse.value(forHTTPHeaderField:)` joins them; `nil` when absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        switch storage {
        case .parsed(let fields):
            return fields[name]
        case .lines(let text):
            var joined: String?
            Self.forEachValue(named: name, in: text) { value in
                joined = joined.map { $0 + ", " + value } ?? String(value)
                return true
            }
            return joined
        }
    }

    /// The value of the first field with this name (case-insensitive).
    func firstValue(named name: String) -> String? {
        switch storage {
        case .parsed(let fields):
            return fields.first(named: name)
        case .lines(let text):
            var first: String?
            Self.forEachValue(named: name, in: text) { value in
                first = String(value)
                return false
            }
            return first
        }
    }

    /// Calls `body` with the value of each field named `name` (case-insensitive), in order, until it returns `false`.
    func forEachValue(named name: String, _ body: (Substring) -> Bool) {
        switch storage {
        case .parsed(let fields):
            for field in fields where field.name.equalsIgnoringASCIICase(name) {
                if !body(field.value[...]) { return }
            }
        case .lines(let text):
            Self.forEachValue(named: name, in: text, body)
        }
    }

    /// The body length the head announces, when it announces one valid number.
    var contentLength: Int64? {
        firstValue(named: "Content-Length").flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// One entry per field name, repeats joined: what `HTTPURLResponse.allHeaderFields` holds.
    public var allHeaderFields: [String: String] { fields.combined }

    /// The same head as Foundation's `HTTPURLResponse`, built on each call (tens of microseconds on
    /// Linux, where Foundation normalises every field name): for code that needs Foundation's type.
    public var httpURLResponse: HTTPURLResponse {
        // Foundation's initializer is failable only in its signature: swift-corelibs-foundation
        // never fails, and Apple's fails only without a URL, which a head always has.
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: fields.combined)!
    }

    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        guard lhs.statusCode == rhs.statusCode, lhs.httpVersion == rhs.httpVersion, lhs.url == rhs.url else { return false }
        // Two heads still holding the text they arrived in are equal when their texts are:
        // nothing needs parsing (a step around the run that passed the run's response on).
        if case .lines(let left) = lhs.storage, case .lines(let right) = rhs.storage, left == right { return true }
        return lhs.fields == rhs.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(url)
        hasher.combine(fields)
    }

    /// Where the fields are: parsed, or still the text the transport collected.
    private enum FieldStorage: Sendable {
        case parsed(Headers)
        case lines(String)
    }

    /// Calls `body` with the value of each field line named `name` in `text`, in order, until it returns `false`.
    private static func forEachValue(named name: String, in text: String, _ body: (Substring) -> Bool) {
        var rest = text[...]
        while let end = rest.utf8.firstIndex(of: UInt8(ascii: "\n")) {
            let line = rest[..<end]
            rest = rest[rest.utf8.index(after: end)...]
            guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
            if line[..<colon].utf8.elementsEqualIgnoringASCIICase(name.utf8),
               !body(line[line.utf8.index(after: colon)...]) { return }
        }
    }

    private static func parse(_ text: String) -> Headers {
        var fields = Headers()
        var rest = text[...]
        while let end = rest.utf8.firstIndex(of: UInt8(ascii: "\n")) {
            let line = rest[..<end]
            rest = rest[rest.utf8.index(after: end)...]
            guard let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
            fields.appendLine(Header(name: String(line[..<colon]), value: String(line[line.utf8.index(after: colon)...])))
        }
        return fields
    }
}

extension Sequence<UInt8> {
    /// ASCII case-insensitive equality of two byte sequences.
    func elementsEqualIgnoringASCIICase(_ other: some Sequence<UInt8>) -> Bool {
        elementsEqual(other) { a, b in a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A) }
    }
}
