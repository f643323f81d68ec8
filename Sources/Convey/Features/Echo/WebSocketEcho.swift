import Foundation

/// What echo and recording show of a WebSocket beyond its handshake, which is an attempt like any
/// other: each message, ping and pong when the task's style prints bodies (their events carry the
/// contents only then), and one line when the connection closes, with its code, who closed it,
/// how long it lasted and how many messages went each way. The close is recorded as a record of
/// the handshake's request lasting the whole connection, its response body the close line.
final class WebSocketEcho: Sendable {
    private let state = InlineLocked(State())

    private struct State: Sendable {
        /// The handshake that opened the connection, and when its attempt ended.
        var handshake: Exchange?
        var openedAt: ContinuousClock.Instant?
    }

    /// Keeps the attempt's exchange when it opened a WebSocket (a 101 the run accepted).
    func attemptFinished(_ exchange: Exchange?, error: (any Error)?) {
        guard error == nil, let exchange, exchange.head.statusCode == 101 else { return }
        state.withLock { state in
            state.handshake = exchange
            state.openedAt = .now
        }
    }

    /// Echoes and records a WebSocket event of the run as `plan` says.
    func observe(_ event: RunEvent, plan: EchoPlan) {
        let style = plan.style
        switch event.kind {
        case .webSocketMessage(let sent, let isText, let size, let contents?):
            guard style.printsToConsole, !style.contains(.onlyIfError) else { return }
            let formatter = EchoFormatter(style: style, redaction: plan.redaction)
            let body = isText ? formatter.render(body: contents, contentType: "text/plain; charset=utf-8")
                : "<\(DisplayFormat.byteCount(size)) of binary data>"
            let lines = body.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { "    " + $0 }.joined(separator: "\n")
            plan.sink(DisplayFormat.terminalSafe("[Convey] \(sent ? "↑" : "↓") WebSocket \(isText ? "text" : "binary") · \(DisplayFormat.byteCount(size))\n\(lines)"))
        case .webSocketPing(let sent):
            guard style.printsResponseDetail, !style.contains(.onlyIfError) else { return }
            plan.sink("[Convey] \(sent ? "↑" : "↓") WebSocket ping")
        case .webSocketPong(let sent, let roundTrip):
            guard style.printsResponseDetail, !style.contains(.onlyIfError) else { return }
            plan.sink("[Convey] \(sent ? "↑" : "↓") WebSocket pong" + (roundTrip.map { " · " + DisplayFormat.duration($0) } ?? ""))
        case .webSocketClosed(let code, let reason, let byClient, let sentCount, let receivedCount, let error):
            closed(code: code, reason: reason, byClient: byClient, counts: (sentCount, receivedCount), error: error, attempt: event.attempt, plan: plan)
        case .webSocketMessage, .webSocketOpened, .runStarted, .attemptStarted, .requestSent, .responseReceived, .bodyFinished, .exchangeFailed,
             .redirectFollowed, .cacheOutcome, .cacheExchange, .attemptFinished, .retryScheduled, .credentialRefresh, .runFinished:
            break
        }
    }

    /// The close line, and the record of the connection.
    private func closed(code: Int?, reason: String, byClient: Bool, counts: (sent: Int, received: Int), error: (any Error)?, attempt: Int,
                        plan: EchoPlan) {
        let (handshake, openedAt) = state.withLock { ($0.handshake, $0.openedAt) }
        let lifetime = openedAt.map { $0.duration(to: .now) } ?? .zero
        var note = "WebSocket " + (code.map { "closed \(WebSocketCloseCode(rawValue: UInt16(clamping: $0)))" } ?? "ended without a close frame")
        if code != nil { note += byClient ? " by the client" : " by the server" }
        if !reason.isEmpty { note += " (\(plan.redaction.maskedText(reason)))" }
        note += " · ↑\(counts.sent) ↓\(counts.received) messages"
        let style = plan.style
        let prints = style.printsToConsole && (error != nil || !style.contains(.onlyIfError))
        if prints {
            let url = handshake.map { plan.redaction.maskedURL($0.request.url) } ?? "(no URL)"
            var line = "[Convey] \(note) · \(url) · \(DisplayFormat.duration(lifetime))"
            if let error { line += error.isCancellation ? " · cancelled" : " ✗ " + EchoFormatter.summary(of: error) }
            plan.sink(DisplayFormat.terminalSafe(line))
        }
        guard style.contains(.recorded), let recorder = plan.recorder, let handshake else { return }
        let record = AttemptRecord(
            method: handshake.request.method.rawValue, url: handshake.request.url, requestFields: handshake.request.fields, requestBody: nil,
            statusCode: handshake.head.statusCode, responseHeaders: handshake.head.fields, responseBody: Data(note.utf8),
            duration: lifetime, attemptNumber: attempt, error: error, label: plan.label)
        recorder.record(record, taskName: plan.label?.taskName ?? String(describing: plan.taskType), serverName: plan.serverName,
                        redaction: plan.redaction)
    }
}
