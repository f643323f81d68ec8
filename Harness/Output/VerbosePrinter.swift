@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `-v`: each exchange on standard error as it ends, in curl's form: the connection, the request
/// head as the transport sent it after `> ` (the request line as sent, `GET /get HTTP/1.1`, and
/// every field, `Host` and `Accept` included), then the response head after `< `.
///
/// Credentials are masked with the server's `Redaction` (fields as `maskedFields(_:)` masks them,
/// the request line's query as `maskedText(_:)` masks it) and everything is escaped for the
/// terminal. A transport that reports no head as sent (the embedded server's stub), or an exchange
/// that failed, shows the request as Convey handed it over, and says so.
struct VerbosePrinter: Sendable {
    let console: Console
    let redaction: Redaction
    /// The transport's name, as `* transport:` gives it.
    let transport: String

    /// The line a verbose run starts with: `* transport: curl`.
    func printTransport() {
        console.err(console.styledError("* transport: \(transport)", .dim))
    }

    func print(_ exchange: ExchangeTrace.Exchange) {
        if let connection = exchange.metrics?.connectionText {
            console.err(console.styledError("* connection: \(connection)", .dim))
        }
        if let sent = exchange.sentHead {
            request(line: sent.requestLine, fields: sent.fields)
        } else {
            console.err(console.styledError("* the request as Convey handed it to the transport, which reports no head as sent", .dim))
            let url = exchange.request.url
            var target = url.path(percentEncoded: true)
            if target.isEmpty { target = "/" }
            if let query = url.query(percentEncoded: true) { target += "?" + query }
            request(line: "\(exchange.request.method.rawValue) \(target)", fields: Array(exchange.request.fields))
        }
        guard let head = exchange.responseHead else { return }
        // curl shows HTTP/2's status line without a reason phrase, as it arrives.
        let reason = head.httpVersion.hasPrefix("HTTP/1") ? " " + HTTPStatus.reasonPhrase(for: head.statusCode) : ""
        line("<", "\(head.httpVersion) \(head.statusCode)\(reason)")
        for field in redaction.maskedFields(head.fields) { line("<", "\(field.name): \(field.value)") }
        console.err(console.styledError("<", .magenta))
    }

    private func request(line requestLine: String, fields: [Header]) {
        line(">", redaction.maskedText(requestLine))
        for field in redaction.masked(fields) { line(">", field.value.isEmpty ? "\(field.name):" : "\(field.name): \(field.value)") }
        console.err(console.styledError(">", .cyan))
    }

    private func line(_ marker: String, _ text: String) {
        console.err(console.styledError(marker + " ", marker == ">" ? .cyan : .magenta) + DisplayFormat.terminalSafe(text))
    }
}

extension ExchangeMetrics {
    /// The connection as the transport reported it: `HTTP/2 · TLSv1.3 · new connection`, with
    /// `⚠ TLS verification OFF` when the certificate was not verified; `nil` when nothing was reported.
    var connectionText: String? {
        var parts = [httpVersion, tlsVersion].compactMap { $0 }
        if let reusedConnection { parts.append(reusedConnection ? "reused connection" : "new connection") }
        if certificateVerified == false { parts.append(Self.verificationOffWarning) }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }
}
