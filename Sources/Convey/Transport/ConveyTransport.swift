import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What moves bytes for Convey: the seam between the request pipeline and the network.
///
/// Convey ships `CurlTransport` (the default on Linux), `URLSessionTransport` (the default
/// elsewhere) and `StubTransport` (no network, for tests and demos); see Docs/transports.md.
/// A transport throws `URLError`s or `ConveyError`s; the pipeline maps the rest.
public protocol ConveyTransport: Sendable {
    /// Performs one HTTP exchange and returns the whole response.
    ///
    /// Must return promptly with an error when the calling Swift task is cancelled, and should
    /// when `request.cancellation` fires.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// One exchange for a transport to perform.
public struct TransportRequest: Sendable {
    /// The request as it goes on the wire. Small bodies travel in `httpBody`.
    public var urlRequest: URLRequest
    /// A file whose contents are the body, streamed from disk instead of `httpBody`.
    public var bodyFile: URL?
    /// How long the exchange may wait for data before failing with a timeout.
    public var timeout: Duration
    /// Whether the exchange may use an expensive network, such as cellular (Apple platforms).
    public var allowsExpensiveNetworkAccess: Bool
    /// Whether the exchange may use a constrained network, such as Low Data Mode (Apple platforms).
    public var allowsConstrainedNetworkAccess: Bool
    /// Whether the transport follows redirects (the default) or returns the 3xx response as it came.
    public var followsRedirects: Bool
    /// Called as bytes go out and come in, from any thread. `nil` when nobody is watching.
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// Stops the exchange from outside the calling task (cancellation by tag, total timeout):
    /// register how to stop it once started. `nil` when nothing but the calling task can stop it.
    public var cancellation: TransportCancellation?

    /// Creates a request for a transport.
    public init(urlRequest: URLRequest, bodyFile: URL? = nil, timeout: Duration,
                allowsExpensiveNetworkAccess: Bool = true, allowsConstrainedNetworkAccess: Bool = true,
                followsRedirects: Bool = true,
                progress: (@Sendable (TransferProgress) -> Void)? = nil, cancellation: TransportCancellation? = nil) {
        self.urlRequest = urlRequest
        self.bodyFile = bodyFile
        self.timeout = timeout
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        self.followsRedirects = followsRedirects
        self.progress = progress
        self.cancellation = cancellation
    }
}

/// A whole response from a transport.
public struct TransportResponse: Sendable {
    /// The status line and headers.
    public var response: HTTPURLResponse
    /// The body, already decompressed.
    public var data: Data

    /// Creates a response from its parts.
    public init(response: HTTPURLResponse, data: Data) {
        self.response = response
        self.data = data
    }

    /// Creates a response from a status, headers and body, for stubs.
    ///
    /// Throws `ConveyError.invalidURL` when `url` is unusable as a response URL.
    public init(url: URL, statusCode: Int = 200, headers: [String: String] = [:], body: Data = Data()) throws {
        guard let response = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers) else {
            throw ConveyError.invalidURL(url.absoluteString, reason: "cannot build a response for it")
        }
        self.init(response: response, data: body)
    }
}

/// How far a transfer has got, in both directions.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes sent so far.
    public var bytesSent: Int64
    /// The whole request body's size, when known.
    public var totalBytesToSend: Int64?
    /// Body bytes received so far.
    public var bytesReceived: Int64
    /// The whole response body's size, when the server announced it.
    public var totalBytesToReceive: Int64?

    /// Creates a progress report.
    public init(bytesSent: Int64 = 0, totalBytesToSend: Int64? = nil, bytesReceived: Int64 = 0, totalBytesToReceive: Int64? = nil) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }
}
