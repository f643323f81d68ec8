import Foundation

extension RecordedTask {
    /// A record of one attempt with credentials masked and no bodies; `withBodies(of:limit:redaction:)`
    /// adds them. The sizes are passed apart because the recorder drops bodies it will not keep.
    init(attempt: AttemptRecord, id: String, taskName: String, serverName: String, finishedAt: Date, redaction: Redaction,
         requestBodySize: Int, responseBodySize: Int) {
        let duration = attempt.duration.timeInterval
        self.init(
            id: id, taskName: taskName, serverName: serverName,
            startedAt: finishedAt.addingTimeInterval(-duration), duration: duration, attempt: attempt.attemptNumber,
            outcome: Self.outcome(of: attempt.error), method: attempt.method, url: attempt.url.map(redaction.maskedURL),
            requestFields: Array(redaction.maskedFields(attempt.requestFields)),
            requestBodySize: requestBodySize, requestBody: nil,
            statusCode: attempt.statusCode,
            responseHeaders: Array(redaction.maskedFields(attempt.responseHeaders)),
            responseBodySize: responseBodySize, responseBody: nil,
            error: attempt.error.map(EchoFormatter.summary(of:)),
            metrics: attempt.statusCode == nil || attempt.metrics.isEmpty ? nil : attempt.metrics)
        cacheStatus = attempt.cacheStatus == .network ? nil : attempt.cacheStatus
        certificateVerificationOff = attempt.certificateVerificationOff ? true : nil
        outboxItem = attempt.label?.item
    }

    private static func outcome(of error: (any Error)?) -> Outcome {
        guard let error else { return .succeeded }
        if error.isCancellation { return .cancelled }
        return error is HTTPError ? .httpError : .failed
    }

    /// The record with the attempt's bodies kept up to `limit`: text rendered as echo renders it
    /// (secrets in JSON and form bodies masked), other bodies as base64 bytes.
    func withBodies(of attempt: AttemptRecord, limit: Int, redaction: Redaction) -> RecordedTask {
        let formatter = EchoFormatter(style: .consoleFull, redaction: redaction)
        var record = self
        record.requestBodyRecord = Self.body(attempt.requestBody, contentType: attempt.requestFields["Content-Type"],
                                       limit: limit, formatter: formatter)
        record.responseBodyRecord = Self.body(attempt.responseBody, contentType: attempt.responseHeaders["Content-Type"], limit: limit, formatter: formatter)
        return record
    }

    private static func body(_ data: Data?, contentType: String?, limit: Int, formatter: EchoFormatter) -> RecordedBody? {
        guard limit > 0, let data, !data.isEmpty else { return nil }
        if let text = String(data: data, encoding: .utf8), !text.contains("\0") {
            let rendered = formatter.render(body: data, contentType: contentType)
            return RecordedBody(text: String(rendered.prefix(limit)), base64: nil, truncated: rendered.count > limit)
        }
        return RecordedBody(text: nil, base64: data.prefix(limit).base64EncodedString(), truncated: data.count > limit)
    }
}
