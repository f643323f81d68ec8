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

/// One exchange as the pipeline carries it, from the transport's sink to `ServerResponse`: the
/// request as sent, the head as received, the body, and what it cost. Moved along, never rewrapped.
struct Exchange: Sendable {
    /// The request as really sent (after `willSendRequest`, with any field the cache added).
    var request: OutgoingRequest
    /// The final response's head.
    var head: ResponseHead
    /// The body held in memory: all of it for a body kept in memory, the start of an error body
    /// for a file or a stream, else empty.
    var body: Data
    /// What the exchange cost on the wire.
    var metrics = ExchangeMetrics()
    /// Whether the cache took part.
    var cacheStatus: CacheStatus = .network
    /// When the attempt that produced it started, and how long it took to the whole body (the head, for a stream).
    var startedAt = Date()
    var duration: Duration = .zero
    /// Which attempt produced it, from 1.
    var attemptNumber = 1
    /// Set by the runner on the response it hands a step around the run, and cleared by every
    /// change: a step that returns it unchanged passed the run's own response on.
    var passedOnBy: UInt64 = 0
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

    /// The response body as received (after transfer decompression).
    public var data: Data { exchange.body }
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
    public var cacheStatus: CacheStatus { exchange.cacheStatus }
    /// Whether the body came from the cache or another task's exchange (`cacheStatus.isFromCache`):
    /// true for every status but `.network` and `.backgroundRefresh`.
    public var isFromCache: Bool { exchange.cacheStatus.isFromCache }
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

    /// A response an `Interceptor` makes to answer `request` itself, with a head of its own.
    public init(answering request: OutgoingRequest, head: ResponseHead, body: Data = Data()) {
        self.init(payload: body, exchange: Exchange(request: request, head: head, body: body))
    }

    /// The same response with another head (status and fields), for an `Interceptor` that changes
    /// what came back.
    public func replacing(head: ResponseHead) -> ServerResponse<Data> {
        var exchange = exchange
        exchange.head = head
        exchange.passedOnBy = 0
        return ServerResponse(payload: exchange.body, exchange: exchange)
    }

    /// The same response with another body, for an `Interceptor` that changes what came back.
    public func replacing(data: Data) -> ServerResponse<Data> {
        var exchange = exchange
        exchange.body = data
        exchange.passedOnBy = 0
        return ServerResponse(payload: data, exchange: exchange)
    }
}
