@_spi(Tools) import Convey
import Foundation

/// A manual run's result as one JSON object, for scripts, masked as Convey's echo masks and
/// with control characters escaped (`DisplayFormat.terminalSafeJSON`):
///
/// `{"transport", "request": {"method", "url", "headers", "size", "body" | "bodyText" | "bodyBase64", "bodyCut"?},
/// "response": {"status", "reason", "headers", "size", "body" | "bodyText" | "bodyBase64",
/// "connection": {"httpVersion", "tlsVersion", "reused", "certificateVerified"}} | null,
/// "durationMs", "attempt", "error": {"kind", "message"} | null, "warnings": [String], "exitCode"}`.
///
/// Every header list has one shape: `[[name, value], …]`, the fields in order, repeats kept (the
/// request's as the transport reported sending them, `Host` and `Accept` included). The request's
/// body is shown as full echo shows bodies, cut at its limit (`requestBodyLimit`, then `bodyCut`
/// says how many characters, or bytes of binary, were left out). A `connection` field is left out
/// when the transport did not report it. Empty objects and lists print as `{}` and `[]`.
enum JSONReport {
    /// The most characters of a request body shown: full echo's limit (`TaskEchoStyle.consoleFull`).
    static let requestBodyLimit = 1_000_000

    static func text(_ report: RunReport, redaction: Redaction, exitCode: ExitCode) -> String {
        var request: [String: Any] = ["method": report.method, "url": report.url ?? NSNull(), "headers": pairs(report.requestHeaders)]
        // A body streamed from a file is not in memory: its size is the one it went out with.
        let streamedSize = report.requestBody == nil ? sentLength(report.requestHeaders).flatMap { $0 > 0 ? $0 : nil } : nil
        request["size"] = streamedSize ?? report.requestBody?.count ?? 0
        if streamedSize == nil {
            describe(report.requestBody ?? Data(), contentType: report.requestContentType, redaction: redaction, limit: requestBodyLimit,
                     into: &request)
        }
        var object: [String: Any] = [
            "request": request,
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
                "headers": pairs(Array(report.responseHeaders(redaction))),
                "size": response.data.count,
            ]
            describe(response.data, contentType: response.headerFields["Content-Type"], redaction: redaction, limit: nil, into: &described)
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
        return DisplayFormat.terminalSafeJSON(collapsingEmpty(String(decoding: data, as: UTF8.self)))
    }

    /// `[[name, value], …]`.
    private static func pairs(_ fields: [Header]) -> [[String]] {
        fields.map { [$0.name, $0.value] }
    }

    /// The `Content-Length` the request went out with, for a body streamed from a file.
    private static func sentLength(_ fields: [Header]) -> Int? {
        fields.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
    }

    /// A body as echo shows it, masked: `body` (its JSON), `bodyText`, or `bodyBase64` for binary,
    /// cut at `limit` characters (bytes for binary) with `bodyCut` saying how many were left out.
    private static func describe(_ body: Data, contentType: String?, redaction: Redaction, limit: Int?, into object: inout [String: Any]) {
        guard !body.isEmpty else {
            object["bodyText"] = ""
            return
        }
        guard let shown = redaction.maskedBody(body, contentType: contentType) else {
            let kept = limit.map { min($0, body.count) } ?? body.count
            object["bodyBase64"] = body.prefix(kept).base64EncodedString()
            if kept < body.count { object["bodyCut"] = body.count - kept }
            return
        }
        if let limit, shown.count > limit {
            object["bodyText"] = String(shown.prefix(limit))
            object["bodyCut"] = shown.count - limit
        } else if (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) != nil,
                  let json = try? JSONSerialization.jsonObject(with: Data(shown.utf8), options: [.fragmentsAllowed]) {
            object["body"] = json
        } else {
            object["bodyText"] = shown
        }
    }

    /// The JSON text with each empty object and list on one line: `{}` and `[]`, where
    /// `JSONSerialization` writes them across two. Only whitespace holding a line break is removed,
    /// which never occurs inside a string (JSON escapes line breaks there).
    private static func collapsingEmpty(_ json: String) -> String {
        json.replacing(/\{\n[ \n]*\}/, with: "{}").replacing(/\[\n[ \n]*\]/, with: "[]")
    }
}
