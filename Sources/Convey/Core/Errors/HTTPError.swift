import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose status the task's `statusRule` says throws: by default every status outside
/// 200–299 (see `reportBadHTTPStatusAsError`).
///
/// Catch a specific status by its case, or the whole error to read its body:
///
/// ```swift
/// do {
///     try await task.send()
/// } catch HTTPError.ClientError.notFound {
///     // 404
/// } catch HTTPError.ServerError.internalServer {
///     // 500
/// } catch let error as HTTPError where error.serverError != nil {
///     print(error.statusCode, error.bodyText ?? "")
/// }
/// ```
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The status code, such as 404.
    public let statusCode: Int
    /// The response body, possibly empty.
    public let body: Data
    /// The response headers, names as the server sent them.
    public let headers: [String: String]
    /// The URL of the request.
    public let url: URL?
    /// The request method.
    public let method: HTTPMethod

    /// Creates an error for a response status.
    public init(statusCode: Int, body: Data = Data(), headers: [String: String] = [:], url: URL? = nil, method: HTTPMethod = .get) {
        self.statusCode = statusCode
        self.body = body
        self.headers = headers
        self.url = url
        self.method = method
    }

    /// The 4xx error, or `nil` when the status is not 4xx.
    public var clientError: ClientError? { (400..<500).contains(statusCode) ? ClientError(statusCode: statusCode) : nil }
    /// The 5xx error, or `nil` when the status is not 5xx.
    public var serverError: ServerError? { (500..<600).contains(statusCode) ? ServerError(statusCode: statusCode) : nil }
    /// The status class.
    public var responseType: ResponseType { ResponseType(statusCode: statusCode) }
    /// 401: the request lacks valid credentials.
    public var isUnauthorized: Bool { statusCode == 401 }
    /// 403: the credentials are valid but not allowed to do this.
    public var isForbidden: Bool { statusCode == 403 }
    /// The body as UTF-8 text, or `nil` when it is empty or not UTF-8.
    public var bodyText: String? { body.isEmpty ? nil : String(data: body, encoding: .utf8) }

    /// The value of a response header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// A sentence fit to show a person, such as "Please sign in again." for a 401.
    public var userMessage: String? {
        switch statusCode {
        case 401: "Please sign in again."
        case 403: "You don't have permission to do that."
        case 404: "We couldn't find what you asked for."
        case 408, 504: "The server took too long to answer. Please try again."
        case 429: "Too many requests. Please wait a moment and try again."
        case 400..<500: "The request couldn't be completed (error \(statusCode))."
        case 500..<600: "The server had a problem (error \(statusCode)). Please try again later."
        default: "The server answered unexpectedly (status \(statusCode))."
        }
    }

    /// Everything a developer needs in one log line: the status, the request and the start of the
    /// body, credentials masked with `Redaction.standard`.
    public var logDetail: String {
        // Masked before the body is cut, so that a cut never leaves part of a secret behind.
        var line = "HTTP \(statusCode) \(HTTPStatus.reasonPhrase(for: statusCode)) for \(method) \(url?.absoluteString ?? "?")"
        if let text = bodyText { line += ", body: " + String(Redaction.standard.maskedText(text).prefix(300)) }
        else if !body.isEmpty { line += ", body: \(body.count) bytes" }
        return Redaction.standard.maskedText(line)
    }

    /// `logDetail`.
    public var description: String { logDetail }
}

extension HTTPError {
    /// A 4xx status, named as in RFC 9110 (`.notFound`, `.conflict`, …); any other 4xx code is
    /// `.other(code)`.
    ///
    /// A status is also a `catch` pattern for the `HTTPError` carrying it:
    /// `catch HTTPError.ClientError.notFound { … }`.
    public struct ClientError: Sendable, Hashable, CustomStringConvertible {
        /// The status code, 400–499.
        public let statusCode: Int

        /// The error for a 4xx code.
        public init(statusCode: Int) { self.statusCode = statusCode }

        /// A 4xx code with no name of its own, such as 499.
        public static func other(_ code: Int) -> ClientError { ClientError(statusCode: code) }

        /// 400 Bad Request.
        public static let badRequest = Self(statusCode: 400)
        /// 401 Unauthorized.
        public static let unauthorized = Self(statusCode: 401)
        /// 402 Payment Required.
        public static let paymentRequired = Self(statusCode: 402)
        /// 403 Forbidden.
        public static let forbidden = Self(statusCode: 403)
        /// 404 Not Found.
        public static let notFound = Self(statusCode: 404)
        /// 405 Method Not Allowed.
        public static let methodNotAllowed = Self(statusCode: 405)
        /// 406 Not Acceptable.
        public static let notAcceptable = Self(statusCode: 406)
        /// 407 Proxy Authentication Required.
        public static let proxyAuthenticationRequired = Self(statusCode: 407)
        /// 408 Request Timeout.
        public static let requestTimeout = Self(statusCode: 408)
        /// 409 Conflict.
        public static let conflict = Self(statusCode: 409)
        /// 410 Gone.
        public static let gone = Self(statusCode: 410)
        /// 411 Length Required.
        public static let lengthRequired = Self(statusCode: 411)
        /// 412 Precondition Failed.
        public static let preconditionFailed = Self(statusCode: 412)
        /// 413 Content Too Large.
        public static let contentTooLarge = Self(statusCode: 413)
        /// 414 URI Too Long.
        public static let uriTooLong = Self(statusCode: 414)
        /// 415 Unsupported Media Type.
        public static let unsupportedMediaType = Self(statusCode: 415)
        /// 416 Range Not Satisfiable.
        public static let rangeNotSatisfiable = Self(statusCode: 416)
        /// 417 Expectation Failed.
        public static let expectationFailed = Self(statusCode: 417)
        /// 418 I'm a Teapot.
        public static let imATeapot = Self(statusCode: 418)
        /// 421 Misdirected Request.
        public static let misdirectedRequest = Self(statusCode: 421)
        /// 422 Unprocessable Content.
        public static let unprocessableContent = Self(statusCode: 422)
        /// 423 Locked.
        public static let locked = Self(statusCode: 423)
        /// 424 Failed Dependency.
        public static let failedDependency = Self(statusCode: 424)
        /// 425 Too Early.
        public static let tooEarly = Self(statusCode: 425)
        /// 426 Upgrade Required.
        public static let upgradeRequired = Self(statusCode: 426)
        /// 428 Precondition Required.
        public static let preconditionRequired = Self(statusCode: 428)
        /// 429 Too Many Requests.
        public static let tooManyRequests = Self(statusCode: 429)
        /// 431 Request Header Fields Too Large.
        public static let requestHeaderFieldsTooLarge = Self(statusCode: 431)
        /// 451 Unavailable For Legal Reasons.
        public static let unavailableForLegalReasons = Self(statusCode: 451)

        public var description: String { "\(statusCode) \(HTTPStatus.reasonPhrase(for: statusCode))" }

        /// Matches an `HTTPError` with this status, so that `catch HTTPError.ClientError.notFound` works.
        public static func ~= (pattern: ClientError, error: any Error) -> Bool {
            (error as? HTTPError)?.clientError == pattern
        }
    }

    /// A 5xx status, named as in RFC 9110 (`.internalServer`, `.serviceUnavailable`, …); any other
    /// 5xx code is `.other(code)`.
    ///
    /// A status is also a `catch` pattern for the `HTTPError` carrying it:
    /// `catch HTTPError.ServerError.internalServer { … }`.
    public struct ServerError: Sendable, Hashable, CustomStringConvertible {
        /// The status code, 500–599.
        public let statusCode: Int

        /// The error for a 5xx code.
        public init(statusCode: Int) { self.statusCode = statusCode }

        /// A 5xx code with no name of its own, such as 599.
        public static func other(_ code: Int) -> ServerError { ServerError(statusCode: code) }

        /// 500 Internal Server Error.
        public static let internalServer = Self(statusCode: 500)
        /// 501 Not Implemented.
        public static let notImplemented = Self(statusCode: 501)
        /// 502 Bad Gateway.
        public static let badGateway = Self(statusCode: 502)
        /// 503 Service Unavailable.
        public static let serviceUnavailable = Self(statusCode: 503)
        /// 504 Gateway Timeout.
        public static let gatewayTimeout = Self(statusCode: 504)
        /// 505 HTTP Version Not Supported.
        public static let httpVersionNotSupported = Self(statusCode: 505)
        /// 506 Variant Also Negotiates.
        public static let variantAlsoNegotiates = Self(statusCode: 506)
        /// 507 Insufficient Storage.
        public static let insufficientStorage = Self(statusCode: 507)
        /// 508 Loop Detected.
        public static let loopDetected = Self(statusCode: 508)
        /// 510 Not Extended.
        public static let notExtended = Self(statusCode: 510)
        /// 511 Network Authentication Required.
        public static let networkAuthenticationRequired = Self(statusCode: 511)

        public var description: String { "\(statusCode) \(HTTPStatus.reasonPhrase(for: statusCode))" }

        /// Matches an `HTTPError` with this status, so that `catch HTTPError.ServerError.internalServer` works.
        public static func ~= (pattern: ServerError, error: any Error) -> Bool {
            (error as? HTTPError)?.serverError == pattern
        }
    }
}

/// Facts about HTTP status codes: Convey's SPI for its own tools (`@_spi(Tools) import Convey`).
@_spi(Tools) public enum HTTPStatus {
    /// The standard reason phrase for a status code (RFC 9110 §15 and common extensions), such as
    /// "OK" or "Not Found"; for a code with none, the name of its class, such as "Server Error".
    public static func reasonPhrase(for code: Int) -> String {
        phrases[code] ?? ResponseType(statusCode: code).fallbackPhrase
    }

    /// Whether a status sends the client elsewhere with `Location`: 301–303 and 305–308
    /// (304 is a cache answer, not a redirect).
    static func isRedirect(_ code: Int) -> Bool {
        (301...303).contains(code) || (305...308).contains(code)
    }

    private static let phrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        418: "I'm a Teapot", 421: "Misdirected Request", 422: "Unprocessable Content", 423: "Locked",
        424: "Failed Dependency", 425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
        507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
    ]
}

extension ResponseType {
    fileprivate var fallbackPhrase: String {
        switch self {
        case .info: "Informational"
        case .success: "Success"
        case .redirect: "Redirection"
        case .clientError: "Client Error"
        case .serverError: "Server Error"
        case .unknown: "Unknown Status"
        }
    }
}

extension HTTPError {
    /// How much of a streamed body (a download to a file, a stream) an error keeps: its start.
    static var streamedBodyLimit: Int { 64 * 1024 }

    /// How much of `body` an error keeps: all of a body in memory, the start of a stream.
    static func bodyLimit(for body: ResponseBody) -> Int {
        body.inMemory == nil ? streamedBodyLimit : Int.max
    }
}
