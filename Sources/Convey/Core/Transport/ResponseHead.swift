import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The head of a response, before its body: status, version, fields as received, final URL.
///
/// Plain values, cheap to make: what `didReceiveResponse(response:data:)` gets. An
/// `HTTPURLResponse` is built from it only when asked for (`httpURLResponse`,
/// `ServerResponse.httpResponse`). The accessors named like `HTTPURLResponse`'s let a hook written
/// for one read a head unchanged.
public struct ResponseHead: Sendable, Hashable {
    /// The status code.
    public var statusCode: Int
    /// The protocol version as a status line spells it: `HTTP/1.1`, `HTTP/2`.
    public var httpVersion: String
    /// The header fields in order, repeats kept.
    public var fields: Headers
    /// The URL this response answers: its request's (after redirects, the last hop's target).
    public var url: URL

    /// Creates a response head.
    public init(statusCode: Int, httpVersion: String = "HTTP/1.1", fields: Headers = Headers(), url: URL) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        self.url = url
    }

    /// The head of a Foundation response: its fields as Foundation combined them.
    public init(_ response: HTTPURLResponse, url: URL? = nil) {
        var fields = Headers()
        for (name, value) in response.allHeaderFields {
            fields.appendLine(Header(name: String(describing: name), value: String(describing: value)))
        }
        self.init(statusCode: response.statusCode, fields: fields,
                  url: response.url ?? url ?? URL(fileURLWithPath: "/"))
    }

    /// The value of the field with this name (case-insensitive), repeats joined as
    /// `HTTPURLResponse.value(forHTTPHeaderField:)` joins them; `nil` when absent.
    public func value(forHTTPHeaderField name: String) -> String? {
        fields[name]
    }

    /// One entry per field name, repeats joined: what `HTTPURLResponse.allHeaderFields` holds.
    public var allHeaderFields: [String: String] { fields.combined }

    /// The same head as Foundation's `HTTPURLResponse`, built on each call (tens of microseconds on
    /// Linux, where Foundation normalises every field name): for code that needs Foundation's type.
    public var httpURLResponse: HTTPURLResponse { makeHTTPURLResponse() }

    /// The same head as an `HTTPURLResponse`, repeated fields combined with `", "`. Built anew on
    /// each call: the pipeline makes one only where the public API hands one out.
    public func makeHTTPURLResponse() -> HTTPURLResponse {
        // Foundation's initializer is failable only in its signature: swift-corelibs-foundation
        // never fails, and Apple's fails only without a URL, which a head always has.
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: fields.combined)!
    }
}
