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

/// The outcome of a successful run: the decoded payload with everything about the exchange.
public struct ServerResponse<Payload: Sendable>: Sendable {
    /// The decoded payload.
    public let payload: Payload
    /// The response body as received (after transfer decompression).
    public let data: Data
    /// The request as really sent, after `willSendRequest`.
    public let request: OutgoingRequest
    /// The status line and header fields as received, repeats kept.
    public let head: ResponseHead
    /// When the attempt that produced this response started.
    public let startedAt: Date
    /// How long that attempt took, from sending to the whole body received.
    public let duration: Duration
    /// Which attempt produced this response: 1 for the first, 2 after one retry, and so on.
    public let attemptNumber: Int
    /// Whether the body came from the network or the cache, and whether the server revalidated it.
    public internal(set) var cacheStatus: CacheStatus = .network
    /// What the exchange cost on the wire: phase timings, bytes, protocol, connection reuse.
    /// Empty for responses answered from the cache or by a transport that measures nothing.
    public internal(set) var metrics = ExchangeMetrics()

    /// Creates a response; the pipeline does this for you.
    public init(payload: Payload, data: Data, request: OutgoingRequest, head: ResponseHead,
                startedAt: Date, duration: Duration, attemptNumber: Int) {
        self.payload = payload
        self.data = data
        self.request = request
        self.head = head
        self.startedAt = startedAt
        self.duration = duration
        self.attemptNumber = attemptNumber
    }

    /// Creates a response from a Foundation response; the pipeline does this for you.
    public init(payload: Payload, data: Data, request: OutgoingRequest, httpResponse: HTTPURLResponse,
                startedAt: Date, duration: Duration, attemptNumber: Int) {
        self.init(payload: payload, data: data, request: request, head: ResponseHead(httpResponse, url: request.url),
                  startedAt: startedAt, duration: duration, attemptNumber: attemptNumber)
    }

    /// The status line and headers as a Foundation response, built on each access; repeated
    /// fields are combined with `", "`. `head` and `headerFields` keep them apart.
    public var httpResponse: HTTPURLResponse { head.makeHTTPURLResponse() }
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
        head.fields[name]
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
        var response = ServerResponse<Other>(payload: other, data: data, request: request, head: head,
                                             startedAt: startedAt, duration: duration, attemptNumber: attemptNumber)
        response.cacheStatus = cacheStatus
        response.metrics = metrics
        return response
    }
}
