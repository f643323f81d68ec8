import Foundation

/// Settings that apply to every task run against one server. Tasks override some per run
/// through `TaskConfiguration`.
public struct ServerConfiguration: Sendable {
    /// Encodes JSON upload payloads. Default: Convey's own: ISO 8601 dates with
    /// fractional seconds, keys as declared, sorted keys, base64 data.
    public var defaultEncoder: JSONEncoder
    /// Decodes JSON download payloads. Default: Convey's own: ISO 8601 dates with or
    /// without fractional seconds, keys as declared, base64 data.
    public var defaultDecoder: JSONDecoder
    /// When `true` (the default), every status outside 200–299 throws an `HTTPError`. When `false`,
    /// such responses come back as responses and decoding is attempted on their body. A task can
    /// choose otherwise with its own `statusRule`.
    public var reportBadHTTPStatusAsError: Bool
    /// Whether redirects are followed (the default), or come back as responses with their
    /// `Location`. A task can choose otherwise with its own `followsRedirects`.
    public var followsRedirects: Bool = true
    /// The most redirects one attempt follows before it fails with `ConveyError.transport` of
    /// kind `.redirectRefused`. Default: 20, as URLSession. Convey follows redirects itself, on
    /// every transport (see Docs/transports.md).
    public var maximumRedirects: Int = 20
    /// When `true` (the default), responses may arrive compressed (gzip, deflate and what the
    /// transport supports) and are decoded transparently. When `false`, requests ask for
    /// `Accept-Encoding: identity`.
    public var enableGZipDownloads: Bool
    /// How long an attempt may wait for data before it fails with a timeout. Default: 60 seconds.
    public var defaultTimeout: Duration
    /// The most time a whole task may take, all attempts and retry waits included. Default: 5
    /// minutes, so that a server dripping bytes forever cannot hold a task forever. `nil`: no limit.
    public var defaultTotalTimeout: Duration?
    /// How tasks that do not choose their own retry failed attempts. Default: `nil`, no retries.
    public var retryPolicy: RetryPolicy?
    /// When `true`, every task fails at once with `ConveyError.requestsDisabledForDebugging` and
    /// nothing is sent. Default: whether the app was launched with `-fail-all-requests`.
    public var failsAllRequests: Bool
    /// Whether requests may use an expensive network, such as cellular. Default: `true`.
    public var allowsExpensiveNetworkAccess: Bool
    /// Whether requests may use a constrained network, such as Low Data Mode. Default: `true`.
    public var allowsConstrainedNetworkAccess: Bool
    /// Whether the transport waits for connectivity instead of failing at once while offline.
    /// Default: `false`.
    public var waitsForConnectivity: Bool
    /// Steps of the app's own around every run, outermost first (`Interceptor`): each is called
    /// once per run and sees its outcome after retries, credential refresh and redirects. A task
    /// adds its own inside them (`DownloadingTask.interceptors`). Default: none.
    public var interceptors: [any Interceptor] = [] {
        didSet { runSteps = interceptors.map(AppStep.init) }
    }
    /// Steps of the app's own around each exchange on the wire, outermost first (`Interceptor`):
    /// each is called for every attempt and every redirect hop, with the request exactly as it goes
    /// out, and never for an answer from the cache or a HAR file. A task adds its own inside them
    /// (`DownloadingTask.exchangeInterceptors`). Default: none.
    public var exchangeInterceptors: [any Interceptor] = [] {
        didSet { exchangeSteps = exchangeInterceptors.map(AppStep.init) }
    }
    /// `interceptors` and `exchangeInterceptors` as steps of a run's chain, made once when they are
    /// set, so that a run copies references instead of making them anew.
    private(set) var runSteps: [any ChainStep] = []
    private(set) var exchangeSteps: [any ChainStep] = []
    /// What watches every run: each receives every run's events, in order (`RunObserver`). Echo
    /// and recording watch besides them. Default: none.
    public var observers: [any RunObserver] = []
    /// Distributed tracing: W3C trace context on each request on the wire to the origins it
    /// allows, and OpenTelemetry spans to its exporter (see `TracingConfiguration`, Docs/tracing.md).
    /// Default: `nil`, off: runs carry no trace headers and make no spans.
    public var tracing: TracingConfiguration?
    /// OpenTelemetry's HTTP client metrics: each request on the wire measured (duration, body
    /// sizes, requests in flight, connections, cache outcomes) and handed to its exporter (see
    /// `MetricsConfiguration`, Docs/metrics.md). Default: `nil`, off: runs measure nothing.
    public var metrics: MetricsConfiguration?
    /// The `User-Agent` sent with every request. Default: `nil`, which sends
    /// `<app>/<version> Convey/<version>` (see `ServerConfiguration.standardUserAgent`).
    public var userAgent: String?
    /// Headers sent with every request; the server's `headers(for:)` and the task's `headers`
    /// replace fields of the same name.
    public var defaultHeaders: Headers
    /// The echo style of tasks that do not choose their own. Default: `.recorded`.
    public var defaultEchoStyle: TaskEchoStyle
    /// Where console echo goes: called with each echo block, from any thread, as text without a
    /// trailing newline and without a control character a terminal acts on. Default: standard
    /// output, one whole block at a time.
    ///
    /// ```swift
    /// configuration.echoSink = { text in logger.debug("\(text)") }
    /// ```
    public var echoSink: @Sendable (String) -> Void
    /// Which header, query and JSON field values are hidden in echo output and recordings.
    public var redaction: Redaction
    /// The size from which upload tasks gzip their bodies (`Content-Encoding: gzip`), in bytes
    /// before compression, unless a task sets its own `uploadGzipMinimumSize`; smaller bodies go
    /// as they are, where gzip's overhead outweighs the saving. Default: `nil`, no body is
    /// gzipped; set it only for servers that accept compressed requests.
    public var uploadGzipMinimumSize: Int?
    /// The HTTP cache GET and HEAD tasks read and fill. Default: `nil`, no caching; set a
    /// `DataCache` (memory only, or backed by a folder) to turn it on. See Docs/caching.md.
    public var cache: DataCache?
    /// How tasks use `cache` unless they choose their own `cacheStrategy`. Default: `.localFirst`,
    /// HTTP's own freshness and revalidation rules.
    public var defaultCacheStrategy: CacheStrategy = .localFirst
    /// Whether responses without explicit freshness (no `max-age`, no `Expires`) stay fresh for
    /// 10% of the time since their `Last-Modified`, at most a day (RFC 9111 §4.2.2). Default:
    /// `false`: an API's answers are not guessed fresh, they are revalidated each time; turn it on
    /// for static content.
    public var usesHeuristicFreshness = false
    /// The heuristic the cache applies: the standard one when `usesHeuristicFreshness` is on.
    var heuristicFreshness: HeuristicFreshness? { usesHeuristicFreshness ? .standard : nil }
    /// Whether identical GET and HEAD requests in flight at once share one exchange (with a cache
    /// set and a strategy other than `.never`; never for requests with a body). Default: `true`.
    /// A task turns it off with `TaskConfiguration.coalescesRequests`.
    public var coalescesRequests = true
    /// Where attempts of tasks with the `.recorded` echo style are persisted. Default: `nil`,
    /// nothing is recorded and nothing is written to disk. See `TaskRecorder`.
    public var recorder: TaskRecorder?
    /// The transport a server makes when none is set on it. Default: `.platformDefault`
    /// (curl on Linux, URLSession elsewhere, or `CONVEY_TRANSPORT` from the environment).
    /// See Docs/transports.md.
    @_spi(Transport) public var builtInTransport: BuiltInTransport = .platformDefault
    /// How the built-in transport secures connections: trust roots, pinned public keys, the lowest
    /// TLS version, a client certificate. Default: the system's trust, no pins, TLS 1.2 or later.
    /// `CurlTransport` and, on Apple platforms, `URLSessionTransport` do them; see Docs/tls-and-proxies.md.
    public var tls = TLSConfiguration()
    /// The built-in transport's proxy. Default: `.environment` (`http_proxy`, `https_proxy`, `no_proxy`).
    /// `CurlTransport` and, on Apple platforms, `URLSessionTransport` take an explicit one; see Docs/tls-and-proxies.md.
    public var proxy = ProxyConfiguration.environment
    /// The HTTP version the built-in transport asks for. Default: `.automatic`, HTTP/2 over TLS
    /// when the server offers it. `URLSessionTransport` takes `.automatic` and `.http3` only
    /// (URLSession has no switch for the others, which it refuses); see Docs/transports.md.
    public var httpVersion = HTTPVersionPreference.automatic
    /// The most bytes a response body held in memory may have, counted after decompression; a
    /// larger one stops at once with `ConveyError.responseTooLarge`. Default: 100 MiB. `nil`: no
    /// limit. Tasks override it with `TaskConfiguration.maximumResponseSize`. Downloads to a file
    /// and streams are not held in memory and are not limited by it.
    public var maximumResponseSize: Int64? = ServerConfiguration.defaultMaximumResponseSize
    /// The most bytes a response's status line and header fields may take; a larger head stops at
    /// once with `ConveyError.responseTooLarge`. Default: 256 KiB.
    public var maximumResponseHeadSize: Int = TransportRequest.defaultMaximumResponseHeadSize

    /// Whether runs in flight keep the app running for a while after it is backgrounded: on iOS,
    /// tvOS and visionOS they hold a background-task assertion
    /// (`UIApplication.beginBackgroundTask`) from the first run's start to the last one's end, so
    /// that they can finish (the system grants about 30 seconds, then ends it). Ignored in app
    /// extensions and on other platforms. Default: `false`. A stream's or a file download's run
    /// ends when it hands back its response, so the assertion covers its head, not its body.
    public var finishesRunsInBackground = false

    /// The in-memory body limit unless one is set: 100 MiB.
    public static var defaultMaximumResponseSize: Int64 { 100 << 20 }
    /// How runs wait between attempts: `Task.sleep`, or in tests a waiter that only records.
    var retryWaiter: any RetryWaiting = SleepingRetryWaiter.shared
    /// What runs measure their total timeout on: the continuous clock, or in tests one moved by hand.
    var runClock: any RunClock = ContinuousRunClock.shared
    /// The background-task assertion runs hold when `finishesRunsInBackground` is on: the
    /// process's, or in tests one over recorded background tasks.
    var backgroundRunAssertion = BackgroundRunAssertion.shared

    /// Creates a configuration; every parameter has the documented default.
    public init(
        defaultEncoder: JSONEncoder = JSONCoding.makeEncoder(),
        defaultDecoder: JSONDecoder = JSONCoding.makeDecoder(),
        reportBadHTTPStatusAsError: Bool = true,
        enableGZipDownloads: Bool = true,
        defaultTimeout: Duration = .seconds(60),
        defaultTotalTimeout: Duration? = .seconds(300),
        retryPolicy: RetryPolicy? = nil,
        failsAllRequests: Bool = ServerConfiguration.launchedWithFailAllRequests,
        allowsExpensiveNetworkAccess: Bool = true,
        allowsConstrainedNetworkAccess: Bool = true,
        waitsForConnectivity: Bool = false,
        userAgent: String? = nil,
        defaultHeaders: Headers = [],
        defaultEchoStyle: TaskEchoStyle = .recorded,
        echoSink: @escaping @Sendable (String) -> Void = { StandardOutputEcho.write($0) },
        redaction: Redaction = .standard
    ) {
        self.defaultEncoder = defaultEncoder
        self.defaultDecoder = defaultDecoder
        self.reportBadHTTPStatusAsError = reportBadHTTPStatusAsError
        self.enableGZipDownloads = enableGZipDownloads
        self.defaultTimeout = defaultTimeout
        self.defaultTotalTimeout = defaultTotalTimeout
        self.retryPolicy = retryPolicy
        self.failsAllRequests = failsAllRequests
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        self.waitsForConnectivity = waitsForConnectivity
        self.userAgent = userAgent
        self.defaultHeaders = defaultHeaders
        self.defaultEchoStyle = defaultEchoStyle
        self.echoSink = echoSink
        self.redaction = redaction
    }

    /// Whether the process was launched with the `-fail-all-requests` argument.
    public static let launchedWithFailAllRequests = failsAllRequests(launchArguments: ProcessInfo.processInfo.arguments)

    /// Whether these launch arguments ask for every request to fail: one of them is exactly `-fail-all-requests`.
    static func failsAllRequests(launchArguments: [String]) -> Bool {
        launchArguments.dropFirst().contains("-fail-all-requests")
    }

    /// The `User-Agent` used when `userAgent` is `nil`: the app's name and version, then Convey's.
    public static let standardUserAgent: String = {
        let info = Bundle.main.infoDictionary
        let app = (info?["CFBundleName"] as? String) ?? ProcessInfo.processInfo.processName
        let version = (info?["CFBundleShortVersionString"] as? String).map { "/\($0)" } ?? ""
        return "\(app)\(version) Convey/\(conveyVersion)"
    }()
}

/// Convey's version, sent in the default `User-Agent`.
public let conveyVersion = "0.1.0"
