@_spi(Transport) @_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of one manual run, masked for display, ready to print for people or as JSON.
struct RunReport: Sendable {
    let method: String
    /// What carried the request: `curl`, `urlsession` or `embedded (no network)`.
    let transport: String
    /// The URL as sent, credentials masked; `nil` when the run failed before a request was built.
    let url: String?
    /// The URL as sent, else the one the task was for (a run cancelled before its request was
    /// built), credentials masked: for messages.
    let target: String
    /// The request's header fields as sent, in order, repeats kept, credentials masked: as the
    /// transport reported sending them when it did (`Host`, `Accept` and the others it adds
    /// included), else as Convey handed them to it.
    let requestHeaders: [Header]
    /// The request's body when it was held in memory (`nil` without one, or streamed from a file).
    let requestBody: Data?
    /// The request's `Content-Type`, which says how its body is shown.
    let requestContentType: String?
    let response: ServerResponse<Data>?
    let error: (any Error)?
    let duration: Duration
    let exitCode: ExitCode
    /// What went wrong, in one line, credentials masked.
    let errorText: String?
    /// Warnings about how the request went out, such as `--insecure`'s.
    let warnings: [String]

    /// A report of a run: `response` is the last one received (also when a status ended the run
    /// with `error`), `sentHead` the last request head the transport reported sending, `fail` is
    /// what `-f` or `--fail-with-body` make of a status of 400 or more, `resumeComplete` that `-C`
    /// found nothing left to fetch (a 416, which is then no error).
    init(method: HTTPMethod, transport: String, sent: OutgoingRequest?, intended: URL? = nil, sentHead: SentHead? = nil,
         response: ServerResponse<Data>?, error: (any Error)?,
         duration: Duration, redaction: Redaction, warnings: [String] = [], fail: OutputOptions.FailMode? = nil,
         resumeComplete: Bool = false) {
        let request = response?.request ?? sent
        self.method = request?.method.rawValue ?? method.rawValue
        self.transport = transport
        self.url = request.map { redaction.maskedURL($0.url) }
        target = url ?? intended.map(redaction.maskedURL) ?? ""
        self.requestHeaders = redaction.masked(sentHead?.fields ?? Array(request?.fields ?? Headers()))
        requestBody = request?.body
        requestContentType = request?.fields["Content-Type"]
        self.response = response
        self.error = error
        self.duration = response?.duration ?? duration
        self.warnings = warnings
        let status = response?.statusCode ?? 0
        if resumeComplete {
            exitCode = .ok
            errorText = nil
        } else if fail != nil, status >= 400, error == nil || error is HTTPError {
            exitCode = .httpErrorWithFail
            errorText = "The requested URL returned error: \(status)"
        } else {
            exitCode = if let error { ExitCode(error: error) } else { ExitCode(status: status) }
            errorText = error.map { redaction.maskedText(String(describing: $0)) }
        }
    }

    /// Whether `-f` (or `--fail-with-body`) turned a status into the run's failure.
    var failedOnStatus: Bool { exitCode == .httpErrorWithFail }

    /// The response header fields as received, repeats kept, credentials masked.
    func responseHeaders(_ redaction: Redaction) -> Headers {
        redaction.maskedFields(response?.headerFields ?? Headers())
    }

    /// The response body as Convey's echo shows it (`Redaction.maskedBody`), or `nil` when there
    /// is none or it is binary.
    func responseBodyText(_ redaction: Redaction) -> String? {
        guard let response, !response.data.isEmpty else { return nil }
        return redaction.maskedBody(response.data, contentType: response.headerFields["Content-Type"])
    }

    /// `200 OK`.
    var statusText: String? {
        response.map { "\($0.statusCode) \(HTTPStatus.reasonPhrase(for: $0.statusCode))" }
    }

    /// A short name for the kind of failure, for JSON output.
    var errorKind: String? {
        if failedOnStatus { return "http" }
        guard let error else { return nil }
        if error.isCancellation { return "cancelled" }
        if error is HTTPError { return "http" }
        if error is ResumeRefused { return "download" }
        guard let convey = error as? ConveyError else { return "other" }
        return switch convey {
        case .transport: "transport"
        case .attemptTimedOut, .totalTimedOut: "timeout"
        case .requestsDisabledForDebugging, .serverDisabled, .noRemote: "disabled"
        case .invalidURL: "invalidURL"
        case .encodingFailed, .invalidHeaderField: "encoding"
        case .decodingFailed: "decoding"
        case .notCached, .cacheFolderUnavailable: "cache"
        case .responseTooLarge: "too large"
        case .downloadFailed: "download"
        case .noRecordedAnswer, .harFileUnusable: "fixtures"
        case .credentialRefused, .outboxLimitReached, .attemptsExhausted, .expired, .notDelivered, .outboxStorageFailed,
             .outboxFolderInUse, .unknownOutboxItem: "outbox"
        case .webSocket: "webSocket"
        case .cancelled: "cancelled"
        }
    }
}
