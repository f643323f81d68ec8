/// An HTTP request method. The common ones are named; any other token can be written as a string literal.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token as sent on the wire, such as "GET".
    public let rawValue: String

    /// Creates a method from its token; tokens are case-sensitive in HTTP and sent as given.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a method from a string literal, such as `"PROPFIND"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `GET`: read a resource. The default for every task.
    public static let get: HTTPMethod = "GET"
    /// `POST`: submit a body to be processed.
    public static let post: HTTPMethod = "POST"
    /// `PUT`: replace a resource with the body.
    public static let put: HTTPMethod = "PUT"
    /// `PATCH`: change part of a resource.
    public static let patch: HTTPMethod = "PATCH"
    /// `DELETE`: remove a resource.
    public static let delete: HTTPMethod = "DELETE"
    /// `HEAD`: like GET, without the body.
    public static let head: HTTPMethod = "HEAD"
    /// `OPTIONS`: ask what the resource supports.
    public static let options: HTTPMethod = "OPTIONS"

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": true
        default: false
        }
    }

    /// Whether a request body is forbidden in practice: GET and HEAD bodies have no defined meaning
    /// and URLSession on Linux rejects them.
    public var forbidsBody: Bool { rawValue == "GET" || rawValue == "HEAD" }

    public var description: String { rawValue }
}
