import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What moves bytes for Convey: the seam between the request pipeline and the network.
///
/// Convey ships `CurlTransport` (the default on Linux), `URLSessionTransport` (the default
/// elsewhere) and `StubTransport` (no network, for tests and demos); see Docs/transports.md.
/// A transport throws `URLError`s or `ConveyError`s; the pipeline maps the rest.
@_spi(Transport) public protocol ConveyTransport: Sendable {
    /// Performs one HTTP exchange: delivers the response's head, then its body as it arrives, to
    /// `sink`, and returns when the body is complete. A redirect is a response like any other:
    /// a transport never follows one; the pipeline does (`ServerConfiguration.maximumRedirects`).
    ///
    /// Must return promptly with an error when the calling Swift task is cancelled: that is how
    /// every cancellation reaches a transport, including cancellation by tag or type and the
    /// total timeout, which cancel the task an attempt's exchange runs in. An error `sink` throws
    /// ends the exchange and is rethrown.
    /// A transport that only ever has whole bodies calls `sink.deliver(_:)` with a `TransportResponse`.
    ///
    /// Runs on the caller's executor (the run's own task in the pipeline, never `@ConveyActor`),
    /// so a transport that answers there crosses no thread; an implementation without
    /// `nonisolated(nonsending)` runs on the global executor instead, which works but may cost a hop.
    nonisolated(nonsending) func send(_ request: TransportRequest, into sink: any ResponseBodySink) async throws -> ExchangeMetrics

    /// Whether `send` registers a way to stop its exchange with `request.cancellation` (and ends
    /// promptly when it is used), so that the pipeline can run it in the run's own task. Default:
    /// `false`: the pipeline runs each exchange in a task of its own and cancels that task to stop it.
    var registersExchangeCancellation: Bool { get }
}

extension ConveyTransport {
    @_spi(Transport) public var registersExchangeCancellation: Bool { false }
}

/// Something that stops one exchange in flight when asked: what a transport registers with
/// `ExchangeCancellation` (its transfer, say).
@_spi(Transport) public protocol ExchangeCancelling: AnyObject, Sendable {
    /// Ends the exchange promptly: its `send` throws `URLError(.cancelled)`. Called at most once, from any thread.
    func cancelExchange()
}

/// How a run stops an exchange without cancelling the task the exchange runs in: cancellation by
/// tag, by type and the total timeout stop the run, never its caller's task.
///
/// A transport whose `registersExchangeCancellation` is `true` registers what stops its exchange
/// before it waits for the network, and ends the exchange when it is used, as it does when its
/// task is cancelled.
@_spi(Transport) public struct ExchangeCancellation: Sendable {
    /// The run whose stops reach the exchange; `nil` when only the task's cancellation does.
    let run: ActiveRun?

    init(run: ActiveRun?) {
        self.run = run
    }

    /// An exchange only its task's cancellation stops.
    public static var none: ExchangeCancellation { ExchangeCancellation(run: nil) }

    /// Registers `canceller` to be told when the run stops; returns `false` when it has stopped
    /// already, in which case nothing is registered and the exchange must end at once.
    public func register(_ canceller: any ExchangeCancelling) -> Bool {
        guard let run else { return true }
        return run.exchangeCancellable(by: RegisteredCanceller(canceller: canceller))
    }

    /// Runs `operation` in a task of its own, which the run's stop cancels.
    func inTaskOfItsOwn<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let task = Task { try await operation() }
        if let run, !run.exchangeCancellable(by: task) { task.cancel() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}

/// A transport's registered canceller as work the run's machine owns.
private struct RegisteredCanceller: CancellableWork {
    let canceller: any ExchangeCancelling

    func cancel() { canceller.cancelExchange() }
}

extension ConveyTransport {
    /// Performs one exchange and collects the whole response in memory, with no size limit:
    /// for tools and tests. The pipeline uses `send(_:into:)` with a limit.
    @_spi(Transport) public nonisolated(nonsending) func send(_ request: TransportRequest) async throws -> TransportResponse {
        let sink = InMemoryBody(limit: nil, url: request.request.url)
        let metrics = try await send(request, into: sink)
        return try sink.response(metrics: metrics)
    }
}

/// One exchange for a transport to perform.
@_spi(Transport) public struct TransportRequest: Sendable {
    /// The request as it goes on the wire: method, URL, fields in order, and a body held in memory.
    public var request: OutgoingRequest
    /// A file whose contents are the body, streamed from disk instead of `httpBody`.
    public var bodyFile: URL?
    /// How long the exchange may wait for data before failing with a timeout.
    public var timeout: Duration
    /// Whether the exchange may use an expensive network, such as cellular (Apple platforms).
    public var allowsExpensiveNetworkAccess: Bool
    /// Whether the exchange may use a constrained network, such as Low Data Mode (Apple platforms).
    public var allowsConstrainedNetworkAccess: Bool
    /// Called as bytes go out and come in, from any thread. `nil` when nobody is watching.
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// Whether the body may be large (a download to a file, a stream): a hint to read it in
    /// large pieces, which costs a little more for small bodies.
    public var expectsLargeBody: Bool = false
    /// The most bytes the response's status line and header fields may take; a larger head
    /// fails with `ConveyError.responseTooLarge` as soon as it passes this.
    public var maximumResponseHeadSize: Int = TransportRequest.defaultMaximumResponseHeadSize
    /// The HTTP version to ask for instead of the transport's own (`HTTPVersionPreference`), such
    /// as `.http1_1` for a server whose HTTP/2 is broken. Default: `nil`, the transport's.
    /// `URLSessionTransport` cannot choose: it leaves the version to URLSession.
    public var httpVersion: HTTPVersionPreference?
    /// How the run stops this exchange without cancelling its task; see `ConveyTransport.registersExchangeCancellation`.
    public var cancellation: ExchangeCancellation = .none
    /// Whether the transport reports the request's head as it went out, in the metrics' `sentHead`:
    /// for tools that show it, such as the harness's `-v`. Default: `false`, which costs nothing.
    public var capturesSentHead = false
    /// Who hears of the connections this exchange opens and uses, for a transport that knows its
    /// connections (`ConnectionObserver`). Default: `nil`, which costs nothing.
    var connectionObserver: (any ConnectionObserver)?

    /// The head size limit unless one is set: 256 KiB, as browsers allow.
    public static var defaultMaximumResponseHeadSize: Int { 256 * 1024 }

    /// Creates a request for a transport.
    public init(request: OutgoingRequest, bodyFile: URL? = nil, timeout: Duration,
                allowsExpensiveNetworkAccess: Bool = true, allowsConstrainedNetworkAccess: Bool = true,
                progress: (@Sendable (TransferProgress) -> Void)? = nil) {
        self.request = request
        self.bodyFile = bodyFile
        self.timeout = timeout
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        self.progress = progress
    }
}

/// A whole response: its head and its entire body.
@_spi(Transport) public struct TransportResponse: Sendable {
    /// The status line and header fields, repeats kept.
    public var head: ResponseHead
    /// The body, already decompressed.
    public var data: Data
    /// What the exchange cost on the wire, as far as the transport measured it.
    public var metrics: ExchangeMetrics

    /// Creates a response from its parts.
    public init(head: ResponseHead, data: Data, metrics: ExchangeMetrics = ExchangeMetrics()) {
        self.head = head
        self.data = data
        self.metrics = metrics
    }

    /// Creates a response from a Foundation response and its body, for transports built on one.
    public init(response: HTTPURLResponse, data: Data) {
        self.init(head: ResponseHead(response), data: data)
    }

    /// Creates a response from a status, headers and body, for stubs.
    public init(url: URL, statusCode: Int = 200, headers: Headers = Headers(), body: Data = Data()) {
        self.init(head: ResponseHead(statusCode: statusCode, fields: headers, url: url), data: body)
    }

    /// Creates a response from a status, `[name: value]` headers and body, for stubs.
    public init(url: URL, statusCode: Int = 200, headers: [String: String], body: Data = Data()) {
        self.init(url: url, statusCode: statusCode, headers: Headers(headers), body: body)
    }
}

/// How far a transfer has got, in both directions.
@_spi(Transport) public struct TransferProgress: Sendable, Hashable {
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
