import Foundation

/// The attributes of Convey's spans, as OpenTelemetry's stable HTTP client semantic conventions
/// name them, with nothing secret in them: no header field is recorded, the URL loses its user
/// info and fragment, and the values of query parameters that the server's `Redaction` hides (and
/// those the conventions name) become `REDACTED`.
struct SpanAttributes {
    // Room for every attribute a span gets, so that neither grows while it is made.
    var text = [String: String](minimumCapacity: 8)
    var integers = [String: Int](minimumCapacity: 4)
    var isError = false
    var statusMessage: String?

    /// The attributes of a request to `request.url` with `request.method`.
    init(request: OutgoingRequest, redaction: Redaction) {
        let method = request.method.rawValue
        if Self.knownMethods.contains(method) {
            text["http.request.method"] = method
        } else {
            text["http.request.method"] = "_OTHER"
            text["http.request.method_original"] = method
        }
        let url = request.url
        if var host = url.host(percentEncoded: false) {
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            text["server.address"] = host
        }
        if let port = url.port ?? url.scheme.flatMap({ TraceOrigin.defaultPort($0.lowercased()) }) {
            integers["server.port"] = port
        }
        text["url.full"] = Self.fullURL(url, redaction: redaction)
    }

    /// The name of a client span: the method, or `HTTP` for one the conventions do not know.
    var spanName: String {
        let method = text["http.request.method"] ?? "_OTHER"
        return method == "_OTHER" ? "HTTP" : method
    }

    /// Adds the response's status (an error from 400 on) and the protocol it came in.
    mutating func add(_ exchange: Exchange) {
        add(status: exchange.head.statusCode)
        if let version = Self.protocolVersion(exchange.metrics.httpVersion ?? exchange.head.httpVersion) {
            text["network.protocol.version"] = version
        }
    }

    /// Adds a status: an error from 400 on, with the status as `error.type`.
    mutating func add(status: Int) {
        integers["http.response.status_code"] = status
        if status >= 400 {
            isError = true
            text["error.type"] = String(status)
        }
    }

    /// Adds a thrown error: `error.type` and the span's status. An HTTP status error carries its status.
    mutating func add(_ error: any Error, redaction: Redaction) {
        isError = true
        if let http = error as? HTTPError {
            add(status: http.statusCode)
            return
        }
        let type = Self.errorType(error)
        text["error.type"] = type
        if case .decodingFailed(let typeName, let codingPath, let reason, _, _) = error as? ConveyError {
            // Without the body's first bytes, which may hold anything.
            statusMessage = redaction.maskedText("Could not decode \(typeName) at \(codingPath.isEmpty ? "the top level" : codingPath): \(reason)")
        } else if let convey = error as? ConveyError {
            // Error descriptions mask credentials with the standard policy; the server's own goes further.
            statusMessage = redaction.maskedText(convey.logDetail)
        } else {
            statusMessage = type
        }
    }

    /// `error.type` of a thrown error: the status of an `HTTPError`, the case of a `ConveyError`,
    /// `cancelled` for cancellation, and the type's full name for the app's own errors.
    static func errorType(_ error: any Error) -> String {
        switch error {
        case let http as HTTPError: String(http.statusCode)
        case let convey as ConveyError: convey.caseName
        case is CancellationError: "cancelled"
        default: String(reflecting: type(of: error))
        }
    }

    /// The methods the conventions know; any other is `_OTHER`, with its name in `http.request.method_original`.
    static let knownMethods: Set<String> = ["CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE", "QUERY"]

    /// Query parameters the conventions mask whatever the server's policy says.
    private static let conventionQueryNames: Set<String> = ["awsaccesskeyid", "signature", "sig", "x-goog-signature"]

    /// What replaces a hidden query value, as the conventions write it.
    static let redactedValue = "REDACTED"

    /// `url.full`: the URL without user info or fragment, hidden query values `REDACTED`.
    static func fullURL(_ url: URL, redaction: Redaction) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return redaction.maskedURL(url)
        }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        components.percentEncodedFragment = nil
        if let query = components.percentEncodedQuery {
            components.percentEncodedQuery = maskedQuery(query, redaction: redaction)
        }
        return components.string ?? redaction.maskedURL(url)
    }

    /// `a=1&token=REDACTED` from `a=1&token=abc`.
    static func maskedQuery(_ query: String, redaction: Redaction) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let encodedName = pair[..<equals]
            let name = (encodedName.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(encodedName)).lowercased()
            guard redaction.hidesQueryParameter(name) || conventionQueryNames.contains(name) else { return String(pair) }
            return encodedName + "=" + redactedValue
        }.joined(separator: "&")
    }

    /// `network.protocol.version` from a status line's protocol: `1.1` from `HTTP/1.1`, `2` from `HTTP/2`.
    static func protocolVersion(_ name: String) -> String? {
        let upper = name.uppercased()
        guard upper.hasPrefix("HTTP/") else { return nil }
        let version = String(name.dropFirst(5))
        return version.isEmpty ? nil : version
    }
}
