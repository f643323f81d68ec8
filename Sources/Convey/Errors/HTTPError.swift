import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response whose status is outside 200–299, thrown when `reportBadHTTPStatusAsError` is on.
///
/// Match on the status class and code:
///
/// ```swift
/// catch let error as HTTPError where error.clientError == .unauthorized { … }
/// catch let error as HTTPError where error.serverError != nil { … }
/// ```
public struct HTTPError: PresentableError, Sendable {
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

    public var logDetail: String {
        var line = "HTTP \(statusCode) \(HTTPStatus.reasonPhrase(for: statusCode)) for \(method) \(url?.absoluteString ?? "?")"
        if let text = bodyText { line += ", body: " + String(text.prefix(300)) }
        else if !body.isEmpty { line += ", body: \(body.count) bytes" }
        return line
    }
}

extension HTTPError {
    /// A 4xx status. Codes with no named case arrive as `.other(code)`.
    public enum ClientError: Sendable, Hashable {
        case badRequest, unauthorized, paymentRequired, forbidden, notFound, methodNotAllowed
        case notAcceptable, proxyAuthenticationRequired, requestTimeout, conflict, gone
        case lengthRequired, preconditionFailed, contentTooLarge, uriTooLong, unsupportedMediaType
        case rangeNotSatisfiable, expectationFailed, imATeapot, misdirectedRequest
        case unprocessableContent, locked, failedDependency, tooEarly, upgradeRequired
        case preconditionRequired, tooManyRequests, requestHeaderFieldsTooLarge
        case unavailableForLegalReasons
        /// Any other 4xx code, such as 499.
        case other(Int)

        private static let byCode: [Int: ClientError] = [
            400: .badRequest, 401: .unauthorized, 402: .paymentRequired, 403: .forbidden, 404: .notFound,
            405: .methodNotAllowed, 406: .notAcceptable, 407: .proxyAuthenticationRequired,
            408: .requestTimeout, 409: .conflict, 410: .gone, 411: .lengthRequired,
            412: .preconditionFailed, 413: .contentTooLarge, 414: .uriTooLong,
            415: .unsupportedMediaType, 416: .rangeNotSatisfiable, 417: .expectationFailed,
            418: .imATeapot, 421: .misdirectedRequest, 422: .unprocessableContent, 423: .locked,
            424: .failedDependency, 425: .tooEarly, 426: .upgradeRequired, 428: .preconditionRequired,
            429: .tooManyRequests, 431: .requestHeaderFieldsTooLarge, 451: .unavailableForLegalReasons,
        ]

        /// The case for a 4xx code.
        public init(statusCode: Int) { self = Self.byCode[statusCode] ?? .other(statusCode) }

        /// The status code of this case.
        public var statusCode: Int {
            if case .other(let code) = self { return code }
            return Self.byCode.first { $0.value == self }?.key ?? 400
        }
    }

    /// A 5xx status. Codes with no named case arrive as `.other(code)`.
    public enum ServerError: Sendable, Hashable {
        case internalServerError, notImplemented, badGateway, serviceUnavailable, gatewayTimeout
        case httpVersionNotSupported, variantAlsoNegotiates, insufficientStorage, loopDetected
        case notExtended, networkAuthenticationRequired
        /// Any other 5xx code, such as 599.
        case other(Int)

        private static let byCode: [Int: ServerError] = [
            500: .internalServerError, 501: .notImplemented, 502: .badGateway, 503: .serviceUnavailable,
            504: .gatewayTimeout, 505: .httpVersionNotSupported, 506: .variantAlsoNegotiates,
            507: .insufficientStorage, 508: .loopDetected, 510: .notExtended,
            511: .networkAuthenticationRequired,
        ]

        /// The case for a 5xx code.
        public init(statusCode: Int) { self = Self.byCode[statusCode] ?? .other(statusCode) }

        /// The status code of this case.
        public var statusCode: Int {
            if case .other(let code) = self { return code }
            return Self.byCode.first { $0.value == self }?.key ?? 500
        }
    }
}

/// Facts about HTTP status codes.
public enum HTTPStatus {
    /// The standard reason phrase for a status code (RFC 9110 §15 and common extensions), such as
    /// "OK" or "Not Found"; for a code with none, the name of its class, such as "Server Error".
    public static func reasonPhrase(for code: Int) -> String {
        phrases[code] ?? ResponseType(statusCode: code).fallbackPhrase
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
