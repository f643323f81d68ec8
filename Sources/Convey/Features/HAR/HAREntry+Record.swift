import Foundation

extension HAREntry {
    /// The entry for a recorded attempt, or `nil` for an attempt that failed before a request was
    /// built (HAR has no entry without a URL). Records were masked when written, with the
    /// recording server's `Redaction`; `privacy` masks again, so a record written with a looser
    /// rule comes out masked all the same.
    init?(_ record: RecordedTask, privacy: HARPrivacy) {
        guard let url = record.url else { return nil }
        let requestFields = Headers(lines: record.requestFields)
        let responseFields = Headers(lines: record.responseHeaders)
        let maskedURL = privacy.text(url)
        let version = record.metrics?.httpVersion ?? ""
        self.init(
            startedAt: record.startedAt,
            time: record.metrics?.total.map { Self.milliseconds($0) } ?? record.duration * 1000,
            request: Request(method: record.method, url: maskedURL, httpVersion: version,
                             cookies: privacy.requestCookies(requestFields), headers: privacy.fields(requestFields),
                             queryString: HARPrivacy.queryPairs(ofURL: maskedURL),
                             postData: Self.postData(record, contentType: requestFields["Content-Type"], privacy: privacy),
                             bodySize: Int64(record.requestBodySize)),
            response: Self.response(record, fields: responseFields, version: version, privacy: privacy),
            timings: record.metrics.map { Timings($0) } ?? Timings(),
            convey: ConveyFields(taskType: record.taskName, attempt: record.attempt,
                                 cacheStatus: (record.cacheStatus ?? .network).rawValue, server: record.serverName,
                                 outcome: record.outcome.rawValue,
                                 failure: record.statusCode == nil ? Self.failure(record, privacy: privacy) : nil))
    }

    private static func postData(_ record: RecordedTask, contentType: String?, privacy: HARPrivacy) -> PostData? {
        guard record.requestBodySize > 0 || record.requestBodyRecord != nil else { return nil }
        let mimeType = contentType ?? ""
        guard let body = record.requestBodyRecord else {
            return PostData(mimeType: mimeType, text: "", isBase64: false, comment: "\(record.requestBodySize) bytes, not recorded")
        }
        let written = recorded(body, contentType: mimeType, privacy: privacy)
        return PostData(mimeType: mimeType, text: written.text, isBase64: written.isBase64,
                        comment: body.truncated ? "Cut at the recorder's body limit" : nil)
    }

    private static func response(_ record: RecordedTask, fields: Headers, version: String, privacy: HARPrivacy) -> Response {
        guard let status = record.statusCode else {
            return Response(status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
                            content: Content(size: 0, mimeType: ""), redirectURL: "", bodySize: -1)
        }
        let mimeType = fields["Content-Type"] ?? ""
        var content = Content(size: Int64(record.responseBodySize), mimeType: mimeType)
        if let body = record.responseBodyRecord {
            let written = recorded(body, contentType: mimeType, privacy: privacy)
            content.text = written.text
            if written.isBase64 { content.encoding = "base64" }
            if body.truncated { content.comment = "Cut at the recorder's body limit" }
        } else if record.responseBodySize > 0 {
            content.comment = "\(record.responseBodySize) bytes, not recorded"
        }
        let onWire = record.metrics?.bytesReceived
        if let onWire { content.compression = Int64(record.responseBodySize) - onWire }
        return Response(status: status, statusText: HTTPStatus.reasonPhrase(for: status), httpVersion: version,
                        cookies: privacy.responseCookies(fields), headers: privacy.fields(fields), content: content,
                        redirectURL: fields.first(named: "Location").map(privacy.text) ?? "", bodySize: onWire ?? -1)
    }

    /// A recorded body as HAR text: text masked again, base64 as it is.
    private static func recorded(_ body: RecordedBody, contentType: String, privacy: HARPrivacy) -> (text: String, isBase64: Bool) {
        if let text = body.text { return privacy.body(Data(text.utf8), contentType: contentType) }
        return (body.base64 ?? "", true)
    }

    /// The failure of an attempt without a response, its kind read back from the summary echo wrote.
    private static func failure(_ record: RecordedTask, privacy: HARPrivacy) -> Failure {
        let message = record.error ?? record.outcome.rawValue
        let kind: String = if record.outcome == .cancelled {
            "cancelled"
        } else if message.hasPrefix("Timed out") {
            "timedOut"
        } else {
            // The longest phrase: "Connection lost before the response; not resent" starts like "Connection lost".
            TransportFailure.allCases.filter { message.hasPrefix($0.logPhrase) }.max { $0.logPhrase.count < $1.logPhrase.count }?.rawValue
                ?? TransportFailure.other.rawValue
        }
        return Failure(kind: kind, message: privacy.text(message))
    }
}
