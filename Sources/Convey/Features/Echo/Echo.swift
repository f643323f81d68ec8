import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything echo and recording know about one attempt.
struct AttemptRecord: Sendable {
    var method: String
    var url: URL?
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
    /// The HAR file that answered the attempt in place of the network, if one did.
    var replayedFrom: String?
    /// Whether the request went out with certificate verification turned off.
    var certificateVerificationOff = false
    /// What the run is part of, when something longer than its task (an outbox item's delivery).
    var label: RunLabel?
    /// What the summary line adds at its end: how a WebSocket closed.
    var note: String?
}

/// What echo and recording do with a run's attempts, read once from its task and server.
struct EchoPlan: Sendable {
    /// The task's style: its configuration's, else its `echoStyle`.
    let style: TaskEchoStyle
    /// Asks the task for the style of a run that received some data, when the task has its own
    /// `echoStyle(for:)` (and its configuration names no style); `nil` when `style` holds.
    let styleForData: (@ConveyActor @Sendable (Data?) -> TaskEchoStyle)?
    let sink: @Sendable (String) -> Void
    let redaction: Redaction
    /// Where records go, when the server has a recorder.
    let recorder: TaskRecorder?
    /// The task's method, for an attempt that failed before its request was built.
    let method: HTTPMethod
    /// The task's type and the server's name, for records.
    let taskType: any DownloadingTask.Type
    let serverName: String
    /// Whether requests go out with certificate verification off (a failed attempt's record says so).
    let verificationOffForHTTPS: Bool
    /// What the run is part of, when something longer than its task (an outbox item's delivery).
    let label: RunLabel?

    /// The plan of `task` against `server`; `asksStyleForData` when the task's `echoStyle(for:)`
    /// is not known to be the default, `label` when the run is part of something longer.
    @ConveyActor
    init<Task: DownloadingTask>(task: Task, server: ConveyServer, asksStyleForData: Bool, label: RunLabel?) {
        let fixed = task.configuration?.echoStyle
        style = fixed ?? task.echoStyle
        if fixed == nil, asksStyleForData {
            styleForData = { @ConveyActor data in Hooks.callNow(.echoStyleForData, of: Task.self) { task.echoStyle(for: data) } }
        } else {
            styleForData = nil
        }
        sink = server.storedConfiguration.echoSink
        redaction = server.storedConfiguration.redaction
        recorder = server.storedConfiguration.recorder
        method = task.method
        taskType = Task.self
        serverName = server.storedConfiguration.recorder == nil ? "" : server.name
        verificationOffForHTTPS = server.usesBuiltInTransport && server.storedConfiguration.tls.disablesCertificateVerificationInsecurely
        self.label = label
    }

    /// Whether the plan may print or record anything at all: otherwise the run needs no echo.
    var mayShowAnything: Bool {
        styleForData != nil || style.printsToConsole || (style.contains(.recorded) && recorder != nil)
    }

    /// The style for a run that received `data`: the task's own answer when it has one.
    func style(for data: Data?) async -> TaskEchoStyle {
        guard let styleForData else { return style }
        return await styleForData(data)
    }
}

/// Prints a run's attempts to the server's echo sink in the task's echo style, and hands them to
/// the server's recorder when the style includes `.recorded`: each attempt when it ends, each
/// redirect it followed, each exchange the cache made besides. Runs in the run's own task, off
/// `@ConveyActor` and never on a transport's thread, as every observer does.
struct EchoObserver: RunObserver {
    let plan: EchoPlan
    /// The WebSocket a run opened, for the line that says how it closed.
    private let webSocket = WebSocketEcho()

    /// The observer of a run of `task` planned as `plan`, or `nil` when its echo style neither
    /// prints nor records anything.
    @ConveyActor
    init?<Task: DownloadingTask>(task: Task, plan: RunPlan, start: RunStart) {
        let echo = EchoPlan(task: task, server: plan.server, asksStyleForData: plan.hooks.mustCall(.echoStyleForData),
                            label: start.values[RunLabel.self])
        guard echo.mayShowAnything else { return nil }
        self.plan = echo
    }

    func observe(_ event: RunEvent) async {
        switch event.kind {
        case .attemptFinished(let request, let response, let error, let duration):
            let style = await plan.style(for: response?.data)
            Echo.record(plan, style: style, request: request, exchange: response?.exchange, error: error,
                        attemptNumber: event.attempt, duration: duration)
            webSocket.attemptFinished(response?.exchange, error: error)
        case .redirectFollowed(let response):
            let style = await plan.style(for: response.data)
            Echo.record(plan, style: style, request: response.request, exchange: response.exchange, error: nil,
                        attemptNumber: response.attemptNumber, duration: response.duration)
        case .cacheExchange(let request, let response, let error, let duration):
            Echo.record(plan, style: plan.style, request: request, exchange: response?.exchange, error: error,
                        attemptNumber: event.attempt, duration: duration)
        case .webSocketOpened, .webSocketMessage, .webSocketPing, .webSocketPong, .webSocketClosed:
            webSocket.observe(event, plan: plan)
        case .runStarted, .attemptStarted, .requestSent, .responseReceived, .bodyFinished, .exchangeFailed, .cacheOutcome,
             .retryScheduled, .credentialRefresh, .runFinished:
            break
        }
    }
}

/// Prints attempts to the server's echo sink in the task's echo style, and hands them to the
/// server's recorder when the style includes `.recorded`.
enum Echo {
    /// Echoes and records one finished attempt in `style`.
    static func record(_ plan: EchoPlan, style: TaskEchoStyle, request: OutgoingRequest?, exchange: Exchange?, error: (any Error)?,
                       attemptNumber: Int, duration: Duration, note: String? = nil) {
        let prints = style.printsToConsole && (error != nil || !style.contains(.onlyIfError))
        let recorder = style.contains(.recorded) ? plan.recorder : nil
        guard prints || recorder != nil else { return }
        let sentRequest = request ?? exchange?.request
        var record = AttemptRecord(
            method: (sentRequest?.method ?? plan.method).rawValue, url: sentRequest?.url,
            requestFields: sentRequest?.fields ?? Headers(), requestBody: sentRequest?.body,
            statusCode: exchange?.head.statusCode, responseHeaders: exchange?.head.fields ?? Headers(),
            responseBody: exchange?.body.inMemory, metrics: exchange?.metrics ?? ExchangeMetrics(), duration: exchange?.duration ?? duration,
            attemptNumber: attemptNumber, error: error, cacheStatus: exchange?.tags[CacheStatus.self] ?? .network,
            replayedFrom: exchange?.tags[HARReplayed.self],
            certificateVerificationOff: certificateVerificationOff(exchange: exchange, url: sentRequest?.url, plan: plan))
        record.label = plan.label
        record.note = note
        if prints {
            let text = EchoFormatter(style: style, redaction: plan.redaction).text(for: record)
            plan.sink(DisplayFormat.terminalSafe(text))
        }
        recorder?.record(record, taskName: plan.label?.taskName ?? String(describing: plan.taskType), serverName: plan.serverName,
                         redaction: plan.redaction)
    }

    /// What the transport reported; without a response (a failed attempt), what the server's
    /// built-in transport was told for an `https` URL.
    private static func certificateVerificationOff(exchange: Exchange?, url: URL?, plan: EchoPlan) -> Bool {
        if let exchange { return exchange.metrics.certificateVerified == false }
        return plan.verificationOffForHTTPS && url?.scheme?.lowercased() == "https"
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
            blocks.append("[Convey] ▶ \(record.method) \(url)" + details(headers: record.requestFields, body: record.requestBody))
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
        if let file = record.replayedFrom { line += " · replayed from \(file)" }
        if record.attemptNumber > 1 { line += " · attempt \(record.attemptNumber)" }
        if let label = record.label { line += " · " + label.note }
        if let note = record.note { line += " · " + note }
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
        case .transport(let failure, _, let code, let reason):
            return "\(failure.logPhrase): \(reason) (code \(code))"
        case .attemptTimedOut(let limit, _):
            return "Timed out (attempt limit \(DisplayFormat.duration(limit)))"
        case .totalTimedOut(let limit, _):
            return "Timed out (total limit \(DisplayFormat.duration(limit)))"
        case .decodingFailed(let typeName, let codingPath, let reason, _, _):
            let place = codingPath.isEmpty ? "" : " at \(codingPath)"
            return "Could not decode \(typeName)\(place): \(reason)"
        case .notCached(_, let reason):
            return "Not in the cache: \(reason)"
        case .cacheFolderUnavailable(_, let reason):
            return "Cache folder unavailable: \(reason)"
        case .responseTooLarge(let limit, _, let isHead):
            return "Response \(isHead ? "head" : "body") over the limit of \(DisplayFormat.byteCount(limit))"
        case .webSocket(let failure, _, let closeCode, let reason):
            return "\(failure.logPhrase): \(reason)" + (closeCode.map { " (close code \($0))" } ?? "")
        case .noRemote, .serverDisabled, .requestsDisabledForDebugging, .cancelled, .encodingFailed, .downloadFailed, .invalidHeaderField,
             .noRecordedAnswer, .harFileUnusable, .credentialRefused, .outboxLimitReached, .attemptsExhausted, .expired,
             .notDelivered, .outboxStorageFailed, .outboxFolderInUse, .unknownOutboxItem:
            return convey.logDetail
        }
    }

}
