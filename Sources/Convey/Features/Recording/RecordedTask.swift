import Foundation

/// One recorded attempt of a task: what went on the wire and how it ended, with credentials
/// redacted by the server's `Redaction`. `TaskRecorder` writes one per attempt as a JSON file;
/// Docs/recording.md describes the format.
public struct RecordedTask: Codable, Sendable, Hashable, Identifiable {
    /// How an attempt ended.
    public enum Outcome: String, Codable, Sendable, Hashable {
        /// A response arrived and the task accepted it.
        case succeeded
        /// A response arrived with a status the task rejected (an `HTTPError`).
        case httpError
        /// No usable response: transport failure, timeout, encoding or decoding failure, or a hook threw.
        case failed
        /// The attempt was cancelled.
        case cancelled
    }

    /// The version of the on-disk format this record was written in.
    public static let currentFormatVersion = 2

    /// The record's format version; readers skip records of a version they do not know.
    public var formatVersion: Int
    /// The record's identifier: its file name without `.json`, which sorts by time.
    public var id: String
    /// The task's type name, such as `FetchUserTask`.
    public var taskName: String
    /// The server's `name`.
    public var serverName: String
    /// When the attempt started.
    public var startedAt: Date
    /// How long the attempt took, in seconds.
    public var duration: Double
    /// Which attempt of the task run this was: 1 for the first, 2 after one retry, and so on.
    public var attempt: Int
    /// How the attempt ended.
    public var outcome: Outcome
    /// The request method, such as `GET`.
    public var method: String
    /// The request URL with its userinfo and hidden query parameters masked, or `nil` when the attempt failed
    /// before a request was built.
    public var url: String?
    /// The request header fields in the order they were sent, repeats kept apart, credential
    /// values masked. Records written before the order was kept list theirs sorted by name.
    /// `Headers(record.requestFields)` looks one up by name.
    public var requestFields: [Header]
    /// The size of the request body in bytes (0 for none, or for a body streamed from a file).
    public var requestBodySize: Int
    /// The request body as stored (`"requestBody"` in the file), when the recorder keeps bodies.
    var requestBodyRecord: RecordedBody?
    /// The response status code, when a response arrived.
    public var statusCode: Int?
    /// The response headers, with credential values masked (and URLs in other values, such as a
    /// `Location` with a password).
    public var responseHeaders: [Header]
    /// The size of the response body in bytes.
    public var responseBodySize: Int
    /// The response body as stored (`"responseBody"` in the file), when the recorder keeps bodies.
    var responseBodyRecord: RecordedBody?
    /// What went wrong, without URLs' secrets or bodies; `nil` on success.
    public var error: String?
    /// What the exchange cost on the wire, as far as the transport measured it; `nil` without a response.
    public var metrics: ExchangeMetrics?
    /// How the cache took part (`hit`, `revalidated`, `joined`, `backgroundRefresh`, …); `nil`
    /// for a plain network exchange and in records written before the field existed.
    public var cacheStatus: CacheStatus?
    /// `true` when the request went out with certificate verification turned off
    /// (`TLSConfiguration.disablesCertificateVerificationInsecurely`); `nil` otherwise, and in
    /// records written before the field existed.
    public var certificateVerificationOff: Bool?
    /// The ID of the `Outbox` item this attempt delivered (its `Idempotency-Key` is among the
    /// request headers); `nil` for other tasks, and in records written before the field existed.
    public var outboxItem: String?

    /// The file's keys: the properties' names, but for the bodies.
    private enum CodingKeys: String, CodingKey {
        case formatVersion, id, taskName, serverName, startedAt, duration, attempt, outcome, method, url, requestFields
        case requestBodySize, requestBodyRecord = "requestBody", statusCode, responseHeaders, responseBodySize
        case responseBodyRecord = "responseBody", error, metrics, cacheStatus, certificateVerificationOff, outboxItem
    }

    /// The key of the request's fields in records written before their order was kept: one
    /// entry per name.
    private enum EarlierCodingKeys: String, CodingKey {
        case requestHeaders
    }

    /// Creates a record from its parts; `TaskRecorder` does this.
    init(id: String, taskName: String, serverName: String, startedAt: Date, duration: Double, attempt: Int,
         outcome: Outcome, method: String, url: String?, requestFields: [Header], requestBodySize: Int,
         requestBody: RecordedBody?, statusCode: Int?, responseHeaders: [Header], responseBodySize: Int,
         responseBody: RecordedBody?, error: String?, metrics: ExchangeMetrics? = nil) {
        self.metrics = metrics
        self.formatVersion = Self.currentFormatVersion
        self.id = id
        self.taskName = taskName
        self.serverName = serverName
        self.startedAt = startedAt
        self.duration = duration
        self.attempt = attempt
        self.outcome = outcome
        self.method = method
        self.url = url
        self.requestFields = requestFields
        self.requestBodySize = requestBodySize
        self.requestBodyRecord = requestBody
        self.statusCode = statusCode
        self.responseHeaders = responseHeaders
        self.responseBodySize = responseBodySize
        self.responseBodyRecord = responseBody
        self.error = error
    }

    /// Reads a record, of this format or written before the request's field order was kept.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        id = try container.decode(String.self, forKey: .id)
        taskName = try container.decode(String.self, forKey: .taskName)
        serverName = try container.decode(String.self, forKey: .serverName)
        startedAt = try container.decode(Date.self, forKey: .startedAt)
        duration = try container.decode(Double.self, forKey: .duration)
        attempt = try container.decode(Int.self, forKey: .attempt)
        outcome = try container.decode(Outcome.self, forKey: .outcome)
        method = try container.decode(String.self, forKey: .method)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        if let fields = try container.decodeIfPresent([Header].self, forKey: .requestFields) {
            requestFields = fields
        } else {
            let earlier = try decoder.container(keyedBy: EarlierCodingKeys.self)
            let byName = try earlier.decodeIfPresent([String: String].self, forKey: .requestHeaders) ?? [:]
            requestFields = byName.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { Header(name: $0.key, value: $0.value) }
        }
        requestBodySize = try container.decode(Int.self, forKey: .requestBodySize)
        requestBodyRecord = try container.decodeIfPresent(RecordedBody.self, forKey: .requestBodyRecord)
        statusCode = try container.decodeIfPresent(Int.self, forKey: .statusCode)
        responseHeaders = try container.decode([Header].self, forKey: .responseHeaders)
        responseBodySize = try container.decode(Int.self, forKey: .responseBodySize)
        responseBodyRecord = try container.decodeIfPresent(RecordedBody.self, forKey: .responseBodyRecord)
        error = try container.decodeIfPresent(String.self, forKey: .error)
        metrics = try container.decodeIfPresent(ExchangeMetrics.self, forKey: .metrics)
        cacheStatus = try container.decodeIfPresent(CacheStatus.self, forKey: .cacheStatus)
        certificateVerificationOff = try container.decodeIfPresent(Bool.self, forKey: .certificateVerificationOff)
        outboxItem = try container.decodeIfPresent(String.self, forKey: .outboxItem)
    }

    /// Where the record hides a value: `URL userinfo`, `URL query`, header names and `request body`
    /// whose recorded value contains `Redaction.mask`. A request with any of these cannot be sent
    /// again as recorded.
    public var redactedParts: [String] {
        let maskedNames = Set(requestFields.filter { $0.value.contains(Redaction.mask) }.map(\.name))
        var parts = maskedNames.sorted().map { "header \($0)" }
        if let url {
            let queryStart = url.firstIndex(of: "?") ?? url.endIndex
            if url[queryStart...].contains(Redaction.mask) { parts.insert("URL query", at: 0) }
            if url[..<queryStart].contains(Redaction.mask) { parts.insert("URL userinfo", at: 0) }
        }
        if requestBodyRecord?.text?.contains(Redaction.mask) == true { parts.append("request body") }
        return parts
    }

    /// The request body as recorded, when the recorder keeps bodies: at most its `bodyLimit`
    /// bytes, text as echo shows it (credential fields of JSON and form bodies masked, JSON
    /// pretty-printed with sorted keys), other bodies byte for byte.
    public var requestBody: Data? { requestBodyRecord?.data }
    /// Whether the recorded request body was cut at the recorder's `bodyLimit`.
    public var requestBodyIsTruncated: Bool { requestBodyRecord?.truncated ?? false }
    /// The response body as recorded, when the recorder keeps bodies (as `requestBody`).
    public var responseBody: Data? { responseBodyRecord?.data }
    /// Whether the recorded response body was cut at the recorder's `bodyLimit`.
    public var responseBodyIsTruncated: Bool { responseBodyRecord?.truncated ?? false }
}
