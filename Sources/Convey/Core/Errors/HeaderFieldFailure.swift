/// A request header field that cannot go on the wire: where it came from, its name and why.
///
/// Names must be tokens (RFC 9110 §5.1) and values free of CR, LF and NUL, so that no field can
/// end the header line early and smuggle in another one.
public struct HeaderFieldFailure: Sendable, Hashable, CustomStringConvertible {
    /// Where a request header field came from.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// `ServerConfiguration.userAgent`.
        case userAgent
        /// `ServerConfiguration.defaultHeaders`.
        case defaultHeaders
        /// The task's `headers` (by default the server's `headers(for:)`).
        case taskHeaders
        /// The request body's `contentType` or `contentEncoding`.
        case body
        /// A part header of a multipart body.
        case multipartPart
        /// The request the task's `willSendRequest(request:)` returned.
        case willSendRequest

        /// Where the field came from, as a log phrase.
        var phrase: String {
            switch self {
            case .userAgent: "the server configuration's userAgent"
            case .defaultHeaders: "the server configuration's defaultHeaders"
            case .taskHeaders: "the task's headers"
            case .body: "the request body's content type or encoding"
            case .multipartPart: "a multipart part's headers"
            case .willSendRequest: "the request willSendRequest returned"
            }
        }
    }

    /// Where the field came from.
    public let source: Source
    /// The field's name as given; `description` shows control characters escaped.
    public let name: String
    /// What is wrong with it.
    public let reason: String

    /// Creates a failure for a field.
    public init(source: Source, name: String, reason: String) {
        self.source = source
        self.name = name
        self.reason = reason
    }

    /// What happened, credentials masked with `Redaction.standard`; the value is never shown.
    public var description: String { Redaction.standard.maskedText("Header field \(name.debugDescription) from \(source.phrase) was not sent: \(reason)") }
}
