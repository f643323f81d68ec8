import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request as Convey sends it: method, URL, header fields in order (repeats kept) and body.
///
/// Plain values from the task to the transport: what `willSendRequest(request:)` gets and returns,
/// what the cache, echo and recording read, and what a transport sends (`TransportRequest`).
/// A `URLRequest` is built from it only when asked for (`urlRequest`), as `URLSessionTransport`
/// does; `CurlTransport` hands the fields to libcurl as they are. The accessors named like
/// `URLRequest`'s let a hook written for one work on a request unchanged.
public struct OutgoingRequest: Sendable, Hashable {
    /// The method.
    public var method: HTTPMethod
    /// Where the request goes.
    public var url: URL
    /// The header fields in the order they go out, repeats kept.
    public var fields: Headers
    /// The body held in memory, if any. A body streamed from a file travels beside the request
    /// (`TransportRequest.bodyFile`).
    public var body: Data?

    /// Creates a request.
    public init(method: HTTPMethod = .get, url: URL, fields: Headers = Headers(), body: Data? = nil) {
        self.method = method
        self.url = url
        self.fields = fields
        self.body = body
    }

    /// The request a Foundation request describes: its method, URL, fields and in-memory body.
    /// `nil` for a request without a URL.
    public init?(_ request: URLRequest) {
        guard let url = request.url else { return nil }
        var fields = Headers()
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            fields.appendLine(Header(name: name, value: value))
        }
        self.init(method: HTTPMethod(rawValue: request.httpMethod ?? "GET"), url: url, fields: fields, body: request.httpBody)
    }

    /// The value of the fields with this name (case-insensitive), repeats joined with `", "`;
    /// `nil` when there is none.
    public func value(forHTTPHeaderField name: String) -> String? {
        fields[name]
    }

    /// Sets the field `name` to `value`, replacing every field of that name; `nil` removes them.
    public mutating func setValue(_ value: String?, forHTTPHeaderField name: String) {
        fields[name] = value
    }

    /// Adds a field `name: value`, keeping any of the same name (after the last of them).
    public mutating func addValue(_ value: String, forHTTPHeaderField name: String) {
        fields.add(Header(name: name, value: value))
    }

    /// One entry per field name, repeats joined: what `URLRequest.allHTTPHeaderFields` holds.
    public var allHTTPHeaderFields: [String: String] { fields.combined }

    /// The same request as Foundation's `URLRequest`, built on each call (repeated fields joined):
    /// for code that needs Foundation's type.
    public var urlRequest: URLRequest {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        if method != .get { request.httpMethod = method.rawValue }
        // One assignment: on Linux each `setValue(_:forHTTPHeaderField:)` rescans and renormalises every field.
        request.allHTTPHeaderFields = fields.combined
        request.httpBody = body
        return request
    }
}
