import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything echo and recording know about one attempt.
struct AttemptRecord: Sendable {
    var method: String
    var url: URL?
    var requestHeaders: [String: String]
    /// The request's fields in order, repeats kept.
    var requestFields: Headers
    var requestBody: Data?
    var statusCode: Int?
    var responseHeaders: Headers
    var responseBody: Data?
    var metrics = ExchangeMetrics()
    var duration: Duration
    var attemptNumber: Int
    var error: (any Error)?
    var cacheStatus: CacheStatus = .network
    /// Whether the request went out with certificate verification turned off.
    var certificateVerificationOff = false
}

/// Prints attempts to the server's echo sink in the task's echo style, and hands them to the
/// server's recorder when the style includes `.recorded`.
@ConveyActor
enum Echo {
    /// Echoes and records one finished attempt, as the task's style asks.
    static func attempt<T: DownloadingTask>(of task: T, server: ConveyServer, request: OutgoingRequest?,
                                           exchange: ServerResponse<Data>?, error: (any Error)?,
                                           attemptNumber: Int, duration: Duration) {
        let style = task.configuration?.echoStyle ?? task.echoStyle(for: exchange?.data)
        let prints = style.printsToConsole && (error != nil || !style.contains(.onlyIfError))
        let recorder = style.contains(.recorded) ? server.configuration.recorder : nil
        guard prints || recorder != nil else { return }
        let sentRequest = request ?? exchange?.request
        let record = AttemptRecord(
            method: sentRequest?.method.rawValue ?? task.method.rawValue, url: sentRequest?.url,
            requestHeaders: sentRequest?.allHTTPHeaderFields ?? [:], requestFields: sentRequest?.fields ?? Headers(), requestBody: sentRequest?.body,
            statusCode: exchange?.statusCode, responseHeaders: exchange?.headerFields ?? Headers(),
            responseBody: exchange?.data, metrics: exchange?.metrics ?? ExchangeMetrics(), duration: exchange?.duration ?? duration,
            attemptNumber: attemptNumber, error: error, cacheStatus: exchange?.cacheStatus ?? .network,
            certificateVerificationOff: certificateVerificationOff(exchange: exchange, url: sentRequest?.url, server: server))
        if prints {
            let text = EchoFormatter(style: style, redaction: server.configuration.redaction).text(for: record)
            server.configuration.echoSink.write(DisplayFormat.terminalSafe(text))
        }
        recorder?.record(record, taskName: String(describing: T.self), serverName: server.name,
                         redaction: server.configuration.redaction)
    }

    /// What the transport reported; without a response (a failed attempt), what the server's
    /// built-in transport was told for an `https` URL.
    private static func certificateVerificationOff(exchange: ServerResponse<Data>?, url: URL?, server: ConveyServer) -> Bool {
        if let exchange { return exchange.metrics.certificateVerified == false }
        return server.usesBuiltInTransport && server.configuration.tls.disablesCertificateVerificationInsecurely
            && url?.scheme?.lowercased() == "https"
    }
}

/// Turns an attempt into echo text.
struct EchoFormatter {
    let style: TaskEchoStyle
    let redaction: Redaction

    func text(for record: AttemptRecord) -> String {
        var blocks: [String] = []
        let url = record.url.map(redaction.maskedURL) ?? "(no URL)"
        if style.printsRequestDetail {
            let headers = Headers(lines: record.requestHeaders.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { Header(name: $0.key, value: $0.value) })
            blocks.append("[Convey] ▶ \(record.method) \(url)" + details(headers: headers, body: record.requestBody))
        }
        if style.printsResponseDetail, let status = record.statusCode {
            blocks.append("[Convey] ◀ \(status) \(HTTPStatus.reasonPhrase(for: status))" + details(headers: record.responseHeaders, body: record.responseBody))
            if !record.metrics.isEmpty { blocks.append("[Convey] ⏱ \(record.metrics)") }
        }
        blocks.append(summary(record, url: url))
        return blocks.joined(separator: "\n")
    }

    /// `[Convey] GET https://… → 200 OK · 12.3 ms · ↑0 B ↓312 B`, plus the attempt and the failure.
    private func summary(_ record: AttemptRecord, url: String) -> String {
        var line = "[Convey] \(record.method) \(url)"
        if let status = record.statusCode { line += " → \(status) \(HTTPStatus.reasonPhrase(for: status))" }
        line += " · " + DisplayFormat.duration(record.duration)
        if record.statusCode != nil {
            line += " · ↑\(DisplayFormat.byteCount(record.requestBody?.count ?? 0)) ↓\(DisplayFormat.byteCount(record.responseBody?.count ?? 0))"
        }
        if record.cacheStatus != .network { line += " · cache \(record.cacheStatus.rawValue)" }
        if record.attemptNumber > 1 { line += " · attempt \(record.attemptNumber)" }
        if record.certificateVerificationOff { line += " · " + ExchangeMetrics.verificationOffWarning }
        if let error = record.error {
            line += error.isCancellation ? " · cancelled" : " ✗ " + Self.summary(of: error)
        }
        return line
    }

    /// Header lines in the order given (a response's as received, repeats kept), secrets masked, then the body.
    private func details(headers: Headers, body: Data?) -> String {
        var text = ""
        for field in redaction.maskedFields(headers) {
            text += "\n    \(field.name): \(field.value)"
        }
        if let body, !body.isEmpty {
            text += "\n\n" + render(body: body, contentType: headers["Content-Type"]).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                .map { "    " + $0 }.joined(separator: "\n")
        }
        return text
    }

    /// The body as `Redaction.maskedBody(_:contentType:)` shows it, binary as a size; cut at the style's limit.
    func render(body: Data, contentType: String?) -> String {
        guard let rendered = redaction.maskedBody(body, contentType: contentType) else {
            return "<\(DisplayFormat.byteCount(body.count)) of binary data>"
        }
        let limit = style.bodyLimit
        guard rendered.count > limit else { return rendered }
        return String(rendered.prefix(limit)) + "\n… (cut: \(rendered.count - limit) more characters)"
    }

    /// What went wrong, without the URL (the line already shows it) or the response body (full
    /// echo shows it), masked as error descriptions are: with `Redaction.standard`.
    static func summary(of error: any Error) -> String {
        Redaction.standard.maskedText(unmaskedSummary(of: error))
    }

    private static func unmaskedSummary(of error: any Error) -> String {
        if let http = error as? HTTPError { return "HTTP \(http.statusCode) \(HTTPStatus.reasonPhrase(for: http.statusCode))" }
        guard let convey = error as? ConveyError else { return String(describing: error) }
        switch convey {
        case .invalidURL(_, let reason):
            return "Invalid URL: \(reason)"
        case .transport(let failure):
            return "\(failure.kind.logPhrase): \(failure.reason) (code \(failure.code))"
        case .timedOut(let failure):
            return "Timed out (\(failure.kind.rawValue) limit \(DisplayFormat.duration(failure.limit)))"
        case .decodingFailed(let failure):
            let place = failure.codingPath.isEmpty ? "" : " at \(failure.codingPath)"
            return "Could not decode \(failure.typeName)\(place): \(failure.reason)"
        case .cache(let failure):
            return failure.kind == .notCached ? "Not in the cache: \(failure.reason)" : "Cache folder unavailable: \(failure.reason)"
        case .responseTooLarge(let failure):
            return "Response \(failure.part.rawValue) over the limit of \(DisplayFormat.byteCount(failure.limit))"
        case .noRemote, .serverDisabled, .requestsDisabledForDebugging, .cancelled, .encodingFailed, .downloadFailed, .invalidHeaderField:
            return convey.logDetail
        }
    }

}
