import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The class of an HTTP status code.
public enum ResponseType: String, Sendable, Hashable {
    /// 1xx.
    case info
    /// 2xx.
    case success
    /// 3xx.
    case redirect
    /// 4xx.
    case clientError
    /// 5xx.
    case serverError
    /// Outside 100–599.
    case unknown

    /// The class of a status code.
    public init(statusCode: Int) {
        switch statusCode {
        case 100..<200: self = .info
        case 200..<300: self = .success
        case 300..<400: self = .redirect
        case 400..<500: self = .clientError
        case 500..<600: self = .serverError
        default: self = .unknown
        }
    }
}

/// One exchange as the chain carries it, from the transport's step up to `ServerResponse`: the
/// request as sent, the head as received, the body (in memory, or a stream the top pulls), what
/// it cost, and the values steps attached to it (`ExchangeTags`: how the cache answered, say).
/// Moved along, never rewrapped.
struct Exchange: Sendable {
    /// The request as really sent (after `willSendRequest`, with any field a step added).
    var request: OutgoingRequest
    /// The response's head.
    var head: ResponseHead
    /// The body: whole in memory where the run keeps it there, else a stream.
    var body: ResponseBody
    /// What the exchange cost on the wire; a streamed body's is complete once it ended.
    var metrics = ExchangeMetrics()
    /// Values the steps attached to the response, each under a key of its own.
    var tags = RunValues()
    /// When the attempt that produced it started, and how long it took to the whole body (the head, for a stream).
    var startedAt = Date()
    var duration: Duration = .zero
    /// Which attempt produced it, from 1.
    var attemptNumber = 1

    /// The body when it is in memory; empty for a stream.
    var data: Data { body.inMemory ?? Data() }

    /// Whether `other` is this very response: the same request, head and body. What the runner
    /// asks of the response a step around the run returned: if it is the one the attempts made,
    /// their payload stands; else the run's payload is made from the step's.
    func isSame(as other: Exchange) -> Bool {
        body.isSame(as: other.body) && head == other.head && request == other.request
    }
}

/// The outcome of a successful run: the decoded payload with everything about the exchange.
public struct ServerResponse<Payload: Sendable>: Sendable {
    /// The decoded payload.
    public let payload: Payload
    /// The exchange the payload came from.
    var exchange: Exchange

    init(payload: Payload, exchange: Exchange) {
        self.payload = payload
        self.exchange = exchange
    }

    /// The response body as received (after transfer decompression), when the run keeps it in
    /// memory; empty for a download to a file or a stream, whose body goes to its destination.
    public var data: Data { exchange.data }
    /// The request as really sent, after `willSendRequest`.
    public var request: OutgoingRequest { exchange.request }
    /// The status line and header fields as received, repeats kept.
    public var head: ResponseHead { exchange.head }
    /// When the attempt that produced this response started.
    public var startedAt: Date { exchange.startedAt }
    /// How long that attempt took, from sending to the whole body received.
    public var duration: Duration { exchange.duration }
    /// Which attempt produced this response: 1 for the first, 2 after one retry, and so on.
    public var attemptNumber: Int { exchange.attemptNumber }
    /// Whether the body came from the network or the cache, and whether the server revalidated it.
    public var cacheStatus: CacheStatus { exchange.tags[CacheStatus.self] ?? .network }
    /// Whether the body came from the cache or another task's exchange (`cacheStatus.isFromCache`):
    /// true for every status but `.network` and `.backgroundRefresh`.
    public var isFromCache: Bool { cacheStatus.isFromCache }
    /// What the exchange cost on the wire: phase timings, bytes, protocol, connection reuse.
    /// Empty for responses answered from the cache or by a transport that measures nothing.
    public var metrics: ExchangeMetrics { exchange.metrics }

    /// The status line and headers as a Foundation response, built on each access; repeated
    /// fields are combined with `", "`. `head` and `headerFields` keep them apart.
    public var httpResponse: HTTPURLResponse { head.httpURLResponse }
    /// The header fields in order, repeats kept (every `Set-Cookie` whole).
    public var headerFields: Headers { head.fields }
    /// The HTTP status code.
    public var statusCode: Int { head.statusCode }
    /// The class of the status code.
    public var responseType: ResponseType { ResponseType(statusCode: statusCode) }
    /// The body as UTF-8 text, or `nil` when it is not UTF-8.
    public var stringResult: String? { String(data: data, encoding: .utf8) }

    /// The value of a response header, compared case-insensitively; repeated fields combined with `", "`.
    public func header(_ name: String) -> String? {
        head.value(forHTTPHeaderField: name)
    }

    /// Every value of a response header, one per field line, in order.
    public func headerValues(_ name: String) -> [String] {
        head.fields.values(named: name)
    }

    /// The same response with its body decoded as another type.
    ///
    /// Throws `ConveyError.decodingFailed` with the coding path when the body does not fit.
    public func decoding<Other: Decodable & Sendable>(
        as type: Other.Type = Other.self, using decoder: JSONDecoder = JSONCoding.makeDecoder()
    ) throws -> ServerResponse<Other> {
        replacingPayload(try PayloadDecoding.decode(Other.self, from: data, using: decoder, url: request.url))
    }

    /// The same exchange with its payload transformed, everything else kept.
    public func map<Other: Sendable>(_ transform: (Payload) throws -> Other) rethrows -> ServerResponse<Other> {
        replacingPayload(try transform(payload))
    }

    /// The same exchange carrying another payload.
    func replacingPayload<Other>(_ other: Other) -> ServerResponse<Other> {
        ServerResponse<Other>(payload: other, exchange: exchange)
    }
}

extension ServerResponse where Payload == Data {
    /// A response an `Interceptor` makes to answer `request` itself, without the network: the
    /// status, the header fields and the body, as a server would send them.
    ///
    /// ```swift
    /// return ServerResponse(answering: request, statusCode: 200,
    ///                       headers: ["Content-Type": "application/json"], body: cachedJSON)
    /// ```
    public init(answering request: OutgoingRequest, statusCode: Int = 200, headers: Headers = Headers(), body: Data = Data()) {
        self.init(answering: request, head: ResponseHead(statusCode: statusCode, fields: headers, url: request.url), body: body)
    }

    /// A response an `Interceptor` makes to answer `request` itself, with a head of its own
    /// (`ResponseHead(statusCode:fields:url:)`): its HTTP version, a final URL of its own.
    public init(answering request: OutgoingRequest, head: ResponseHead, body: Data = Data()) {
        self.init(payload: body, exchange: Exchange(request: request, head: head, body: .data(body)))
    }

    /// The body as a stream of chunks, read once: the body in memory as one chunk where the run
    /// keeps it there (`download()`, `send()`); for a download to a file, a stream or events, the
    /// body as it arrives, which whoever sits at the top reads (the file writer, your loop, the
    /// event parser). A step wraps it to watch or change it on its way up
    /// (`ResponseStream.observed(chunk:end:)`, `mapChunks(_:)`) and hands it on with `replacing(body:)`.
    public var body: ResponseStream<Data> {
        ResponseStream(exchange.body, url: exchange.head.url, owning: false)
    }

    /// The same response with another head (status and fields), for an `Interceptor` that changes
    /// what came back.
    public func replacing(head: ResponseHead) -> ServerResponse<Data> {
        var exchange = exchange
        exchange.head = head
        return ServerResponse(payload: payload, exchange: exchange)
    }

    /// The same response with another body, held in memory, for an `Interceptor` that changes
    /// what came back: also in place of a streamed body, which then ends unread.
    public func replacing(data: Data) -> ServerResponse<Data> {
        var exchange = exchange
        if case .stream(let source) = exchange.body { source.close() }
        exchange.body = .data(data)
        return ServerResponse(payload: data, exchange: exchange)
    }

    /// The same response with another body: most often the one it had, wrapped
    /// (`body.observed(chunk:end:)`, `body.mapChunks(_:)`), so that what reads the body on top
    /// reads it through the wrapper.
    public func replacing(body: ResponseStream<Data>) -> ServerResponse<Data> {
        guard let chainBody = body.chainBody else { return self }
        var exchange = exchange
        exchange.body = chainBody
        return ServerResponse(payload: chainBody.inMemory ?? Data(), exchange: exchange)
    }

    /// The exchange a step returned, as the chain carries it on. The payload is the body where
    /// the body is in memory, so a change made with `map` is taken; a streamed body's payload is
    /// empty, and a step that made it something else answered with that instead.
    var chainExchange: Exchange {
        var exchange = exchange
        switch exchange.body {
        case .data:
            exchange.body = .data(payload)
        case .stream(let source):
            if !payload.isEmpty {
                source.close()
                exchange.body = .data(payload)
            }
        }
        return exchange
    }
}
