@_spi(Tools) import Convey
import Foundation

/// A manual run's result as one JSON object, for scripts, masked as Convey's echo masks and
/// with control characters escaped (`DisplayFormat.terminalSafeJSON`):
///
/// `{"transport", "request": {"method", "url", "headers"}, "response": {"status", "reason", "headers", "size",
/// "body" | "bodyText" | "bodyBase64", "connection": {"httpVersion", "tlsVersion", "reused", "certificateVerified"}} | null,
/// "durationMs", "attempt", "error": {"kind", "message"} | null, "warnings": [String], "exitCode"}`; a `connection`
/// field is left out when the transport did not report it.
enum JSONReport {
    static func text(_ report: RunReport, redaction: Redaction, exitCode: ExitCode) -> String {
        var object: [String: Any] = [
            "request": ["method": report.method, "url": report.url ?? NSNull(), "headers": report.requestHeaders.combined] as [String: Any],
            "transport": report.transport,
            "durationMs": (report.duration / .microseconds(1)).rounded() / 1000,
            "exitCode": Int(exitCode.rawValue),
            "response": NSNull(),
            "error": NSNull(),
            "attempt": report.response?.attemptNumber ?? NSNull(),
            "warnings": report.warnings,
        ]
        if let response = report.response {
            var described: [String: Any] = [
                "status": response.statusCode,
                "reason": HTTPStatus.reasonPhrase(for: response.statusCode),
                "headers": report.responseHeaders(redaction).map { [$0.name, $0.value] },
                "size": response.data.count,
            ]
            let shown = report.responseBodyText(redaction)
            if response.data.isEmpty {
                described["bodyText"] = ""
            } else if (try? JSONSerialization.jsonObject(with: response.data, options: [.fragmentsAllowed])) != nil, let shown,
                      let json = try? JSONSerialization.jsonObject(with: Data(shown.utf8), options: [.fragmentsAllowed]) {
                described["body"] = json
            } else if let shown {
                described["bodyText"] = shown
            } else {
                described["bodyBase64"] = response.data.base64EncodedString()
            }
            let metrics = response.metrics
            var connection: [String: Any] = [:]
            connection["httpVersion"] = metrics.httpVersion
            connection["tlsVersion"] = metrics.tlsVersion
            connection["reused"] = metrics.reusedConnection
            connection["certificateVerified"] = metrics.certificateVerified
            described["connection"] = connection
            object["response"] = described
        }
        if let message = report.errorText, let kind = report.errorKind {
            object["error"] = ["kind": kind, "message": message]
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"error": {"kind": "other", "message": "the result could not be written as JSON"}, "exitCode": 5}"#
        }
        return DisplayFormat.terminalSafeJSON(String(decoding: data, as: UTF8.self))
    }
}
