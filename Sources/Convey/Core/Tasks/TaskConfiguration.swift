/// Per-task overrides of the server's configuration. Every `nil` field means "use the server's".
public struct TaskConfiguration: Sendable, Hashable {
    /// How long an attempt may wait for data before it fails with a timeout.
    ///
    /// `nil` uses the server's `defaultTimeout`. Zero or a negative value is clamped to the
    /// shortest timeout Convey allows (1 ms); zero never means "no timeout".
    public var timeout: Duration?
    /// The most time the whole task may take, all attempts and retry waits included.
    ///
    /// `nil` uses the server's `defaultTotalTimeout`. Convey enforces it itself, because
    /// URLSession on Linux ignores its resource timeout.
    public var totalTimeout: Duration?
    /// Whether the task may use an expensive network, such as cellular. `nil` uses the server's.
    public var allowsExpensiveNetworkAccess: Bool?
    /// Whether the task may use a constrained network, such as Low Data Mode. `nil` uses the server's.
    public var allowsConstrainedNetworkAccess: Bool?
    /// The echo style, overriding the task's `echoStyle` property. `nil` keeps the task's own.
    public var echoStyle: TaskEchoStyle?
    /// The most bytes the response body may have in memory, after decompression. `nil` uses the
    /// server's `maximumResponseSize`.
    public var maximumResponseSize: Int64?
    /// Whether the task may share an identical request's exchange in flight. `nil` uses the server's `coalescesRequests`.
    public var coalescesRequests: Bool?

    /// Creates overrides; leave a field `nil` to use the server's setting.
    public init(
        timeout: Duration? = nil,
        totalTimeout: Duration? = nil,
        allowsExpensiveNetworkAccess: Bool? = nil,
        allowsConstrainedNetworkAccess: Bool? = nil,
        echoStyle: TaskEchoStyle? = nil,
        maximumResponseSize: Int64? = nil,
        coalescesRequests: Bool? = nil
    ) {
        self.maximumResponseSize = maximumResponseSize
        self.timeout = timeout
        self.totalTimeout = totalTimeout
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        self.echoStyle = echoStyle
        self.coalescesRequests = coalescesRequests
    }
}

extension Duration {
    /// The duration in seconds, as URLSession wants it.
    var timeInterval: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// The duration clamped to at least one millisecond: a timeout of zero or less is a mistake,
    /// never a request to wait forever.
    var clampedTimeout: Duration { max(self, .milliseconds(1)) }
}
