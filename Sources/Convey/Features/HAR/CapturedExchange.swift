import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One exchange as `HARCaptureStep` saw it go to the network and come back: what becomes an
/// entry in record and capture modes, before masking.
struct CapturedExchange: Sendable {
    /// The request as the transport got it.
    var request: OutgoingRequest
    /// The request body: in memory, or read from its file when small enough.
    var requestBody: Data?
    /// The body's size in bytes; -1 when a file could not be measured.
    var requestBodySize: Int64
    /// Why the body is not kept although there is one (a large file), for the entry's `postData.comment`.
    var requestBodyNote: String?
    /// The head that came back, or `nil` when none did.
    var head: ResponseHead?
    /// The body that came back, decoded, up to the capture's limit.
    var responseBody: Data
    /// How many body bytes came back in all, kept or not.
    var responseBodySize: Int64
    var metrics: ExchangeMetrics
    var startedAt: Date
    var elapsed: Duration
    /// The type of the task it belongs to, and the attempt of its run.
    var taskType: String?
    var attempt: Int?
    /// Why the exchange failed, when it did; the message not yet masked.
    var failure: HAREntry.Failure?
    /// A WebSocket's messages, for the entry of its handshake.
    var webSocketMessages: HARWebSocketMessages.Kept?
}

extension HAREntry {
    /// The entry for an exchange the network answered (or failed), masked as `privacy` says.
    init(_ exchange: CapturedExchange, privacy: HARPrivacy, responseBodyLimit: Int) {
        let request = exchange.request
        let version = exchange.metrics.httpVersion ?? exchange.head?.httpVersion ?? ""
        let timings = Timings(exchange.metrics)
        self.init(
            startedAt: exchange.startedAt,
            time: exchange.metrics.total.map { Self.milliseconds($0) } ?? Self.milliseconds(exchange.elapsed),
            request: Request(
                method: request.method.rawValue, url: privacy.url(request.url), httpVersion: version,
                cookies: privacy.requestCookies(request.fields), headers: privacy.fields(request.fields),
                queryString: HARPrivacy.queryPairs(ofURL: privacy.url(request.url)),
                postData: Self.postData(exchange, privacy: privacy), bodySize: exchange.requestBodySize),
            response: Self.response(exchange, version: version, privacy: privacy, limit: responseBodyLimit),
            timings: timings,
            convey: ConveyFields(taskType: exchange.taskType, attempt: exchange.attempt,
                                 cacheStatus: Self.cacheStatus(exchange),
                                 failure: exchange.failure.map { Failure(kind: $0.kind, message: privacy.text($0.message)) }),
            webSocketMessages: exchange.webSocketMessages.map { Self.webSocketMessages($0, privacy: privacy) })
        if let dropped = exchange.webSocketMessages?.dropped, dropped > 0 {
            response.content.comment = "\(dropped) WebSocket messages past \(responseBodyLimit) bytes of them were not kept."
        }
    }

    private static func postData(_ exchange: CapturedExchange, privacy: HARPrivacy) -> PostData? {
        let mimeType = exchange.request.fields["Content-Type"] ?? ""
        if let body = exchange.requestBody, !body.isEmpty {
            let written = privacy.body(body, contentType: mimeType)
            return PostData(mimeType: mimeType, text: written.text, isBase64: written.isBase64)
        }
        guard let note = exchange.requestBodyNote else { return nil }
        return PostData(mimeType: mimeType, text: "", isBase64: false, comment: note)
    }

    private static func response(_ exchange: CapturedExchange, version: String, privacy: HARPrivacy, limit: Int) -> Response {
        guard let head = exchange.head else {
            return Response(status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
                            content: Content(size: 0, mimeType: ""), redirectURL: "", bodySize: -1)
        }
        let mimeType = head.fields["Content-Type"] ?? ""
        var content = Content(size: exchange.responseBodySize, mimeType: mimeType)
        if !exchange.responseBody.isEmpty {
            let written = privacy.body(exchange.responseBody, contentType: mimeType)
            content.text = written.text
            if written.isBase64 { content.encoding = "base64" }
        }
        if exchange.responseBodySize > exchange.responseBody.count {
            content.comment = "Cut at \(limit) bytes of \(exchange.responseBodySize): the rest was not kept."
        }
        let onWire = exchange.metrics.bytesReceived
        if let onWire { content.compression = exchange.responseBodySize - onWire }
        return Response(status: head.statusCode, statusText: HTTPStatus.reasonPhrase(for: head.statusCode), httpVersion: version,
                        cookies: privacy.responseCookies(head.fields), headers: privacy.fields(head.fields), content: content,
                        redirectURL: head.fields.first(named: "Location").map(privacy.text) ?? "", bodySize: onWire ?? -1)
    }

    /// `revalidated` for a 304 that answered a conditional request (the cache's own, or the
    /// app's), else `network`: a transport sees only exchanges that went to the network.
    private static func cacheStatus(_ exchange: CapturedExchange) -> String {
        let conditional = exchange.request.fields.contains(named: "If-None-Match") || exchange.request.fields.contains(named: "If-Modified-Since")
        return conditional && exchange.head?.statusCode == 304 ? CacheStatus.revalidated.rawValue : CacheStatus.network.rawValue
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
