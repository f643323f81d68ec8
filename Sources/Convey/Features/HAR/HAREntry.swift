import Foundation

/// One HAR 1.2 entry as Convey writes it: one exchange (an attempt, a followed redirect, a
/// retry), already masked as the export asked. Plain strings and numbers, written by `write(to:)`
/// in the order the HAR 1.2 specification lists the fields.
struct HAREntry: Sendable {
    /// A `{name, value}` pair of a header or query list.
    typealias Pair = (name: String, value: String)

    struct Request: Sendable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [Pair]
        var queryString: [Pair]
        var postData: PostData?
        /// The body's size in bytes; -1 when unknown.
        var bodySize: Int64
    }

    /// A request body. HAR 1.2 has text only; a body that is not text is written in base64 with
    /// `_encoding: "base64"` (the spelling `content.encoding` uses, as a custom field).
    struct PostData: Sendable {
        var mimeType: String
        var text: String
        var isBase64: Bool
        var comment: String?
    }

    struct Response: Sendable {
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [Pair]
        var content: Content
        var redirectURL: String
        /// Bytes received on the wire (before decompression); -1 when unknown.
        var bodySize: Int64
    }

    /// A response body: decoded (HAR's `content` is what the client saw after decompression).
    struct Content: Sendable {
        var size: Int64
        /// `size` minus the bytes on the wire, when both are known.
        var compression: Int64?
        var mimeType: String
        var text: String?
        /// `"base64"` for a body that is not text.
        var encoding: String?
        var comment: String?
    }

    struct Cookie: Sendable {
        var name: String
        var value: String
        var path: String?
        var domain: String?
        var expires: String?
        var httpOnly: Bool?
        var secure: Bool?
    }

    /// HAR's phases in milliseconds, each -1 when the transport did not measure it.
    struct Timings: Sendable {
        var blocked: Double = -1
        var dns: Double = -1
        var connect: Double = -1
        var ssl: Double = -1
        var send: Double = -1
        var wait: Double = -1
        var receive: Double = -1
    }

    /// What HAR has no place for, written as `_convey`.
    struct ConveyFields: Sendable {
        /// The task's type name.
        var taskType: String?
        /// The attempt of the task's run (1, then 2 after a retry).
        var attempt: Int?
        /// `CacheStatus` as text: `network`, `hit`, `revalidated`, …
        var cacheStatus: String?
        /// The server's name, for records.
        var server: String?
        /// How a record's attempt ended (`RecordedTask.Outcome`).
        var outcome: String?
        /// Why no response (or no complete one) came back: the kind replay fails with, and the message.
        var failure: Failure?
    }

    /// A failed exchange: `kind` is a `TransportFailure` raw value or `timedOut`.
    struct Failure: Sendable {
        var kind: String
        var message: String
    }

    var startedAt: Date
    /// The whole exchange in milliseconds.
    var time: Double
    var request: Request
    var response: Response
    var timings: Timings
    var convey: ConveyFields
    /// A WebSocket's messages (`_webSocketMessages`), for the entry of its handshake.
    var webSocketMessages: [WebSocketMessage]?

    /// Writes the entry as one JSON object.
    func write(to json: inout HARJSONWriter) {
        json.beginObject()
        json.member("startedDateTime", HARDate.text(for: startedAt))
        json.key("time")
        json.milliseconds(max(0, time))
        writeRequest(to: &json)
        writeResponse(to: &json)
        json.key("cache")
        json.beginObject()
        json.endObject()
        writeTimings(to: &json)
        writeWebSocket(to: &json)
        writeConvey(to: &json)
        json.endObject()
    }

    private func writeRequest(to json: inout HARJSONWriter) {
        json.key("request")
        json.beginObject()
        json.member("method", request.method)
        json.member("url", request.url)
        json.member("httpVersion", request.httpVersion)
        json.key("cookies")
        Self.write(request.cookies, to: &json)
        json.key("headers")
        json.nameValueList(request.headers)
        json.key("queryString")
        json.nameValueList(request.queryString)
        if let postData = request.postData {
            json.key("postData")
            json.beginObject()
            json.member("mimeType", postData.mimeType)
            json.member("text", postData.text)
            if postData.isBase64 { json.member("_encoding", "base64") }
            if let comment = postData.comment { json.member("comment", comment) }
            json.endObject()
        }
        json.member("headersSize", -1)
        json.member("bodySize", request.bodySize)
        json.endObject()
    }

    private func writeResponse(to json: inout HARJSONWriter) {
        json.key("response")
        json.beginObject()
        json.member("status", response.status)
        json.member("statusText", response.statusText)
        json.member("httpVersion", response.httpVersion)
        json.key("cookies")
        Self.write(response.cookies, to: &json)
        json.key("headers")
        json.nameValueList(response.headers)
        json.key("content")
        json.beginObject()
        json.member("size", response.content.size)
        if let compression = response.content.compression { json.member("compression", compression) }
        json.member("mimeType", response.content.mimeType)
        if let text = response.content.text { json.member("text", text) }
        if let encoding = response.content.encoding { json.member("encoding", encoding) }
        if let comment = response.content.comment { json.member("comment", comment) }
        json.endObject()
        json.member("redirectURL", response.redirectURL)
        json.member("headersSize", -1)
        json.member("bodySize", response.bodySize)
        json.endObject()
    }

    private func writeTimings(to json: inout HARJSONWriter) {
        json.key("timings")
        json.beginObject()
        for (name, value) in [("blocked", timings.blocked), ("dns", timings.dns), ("connect", timings.connect), ("ssl", timings.ssl),
                              ("send", timings.send), ("wait", timings.wait), ("receive", timings.receive)] {
            json.key(name)
            json.milliseconds(value)
        }
        json.endObject()
    }

    private func writeConvey(to json: inout HARJSONWriter) {
        json.key("_convey")
        json.beginObject()
        if let taskType = convey.taskType { json.member("taskType", taskType) }
        if let attempt = convey.attempt { json.member("attempt", attempt) }
        if let cacheStatus = convey.cacheStatus { json.member("cacheStatus", cacheStatus) }
        if let server = convey.server { json.member("server", server) }
        if let outcome = convey.outcome { json.member("outcome", outcome) }
        if let failure = convey.failure {
            json.key("failure")
            json.beginObject()
            json.member("kind", failure.kind)
            json.member("message", failure.message)
            json.endObject()
        }
        json.endObject()
    }

    private static func write(_ cookies: [Cookie], to json: inout HARJSONWriter) {
        json.beginArray()
        for cookie in cookies {
            json.beginObject()
            json.member("name", cookie.name)
            json.member("value", cookie.value)
            if let path = cookie.path { json.member("path", path) }
            if let domain = cookie.domain { json.member("domain", domain) }
            if let expires = cookie.expires { json.member("expires", expires) }
            if let httpOnly = cookie.httpOnly { json.member("httpOnly", httpOnly) }
            if let secure = cookie.secure { json.member("secure", secure) }
            json.endObject()
        }
        json.endArray()
    }
}
