import Foundation

/// Everything one run needs from its task and server, read once on `@ConveyActor` before the
/// first attempt: the steps and the runner read it, never the task's settings or the server's.
/// What each attempt reads again is only what may change between attempts: the task's `headers`
/// (the server's `headers(for:)`, with its credentials) and its body (`RequestTemplate`). A
/// class, so that handing it from step to step is one reference, not a copy of every setting.
final class RunPlan: Sendable {
    /// The server the run goes to, for its hooks and credential refresh.
    let server: ConveyServer
    /// The transport of the server when the run started.
    let transport: any ConveyTransport
    /// The task's `sessionTag`.
    let tag: String?
    /// The request every attempt starts from, or why none can be built (no remote, an invalid
    /// URL, a disabled server): then the run fails at once, without asking `retryInterval`.
    let template: Result<RequestTemplate, ConveyError>
    /// The idle timeout of each attempt (the task's, else the server's; at least 1 ms).
    let idleTimeout: Duration
    /// The total timeout of the run, if any: a stream's own, else the task's, else the server's.
    let totalTimeout: Duration?
    /// The most bytes a body held in memory may have, `nil` for no limit.
    let sizeLimit: Int64?
    /// The most bytes a response head may have.
    let headSizeLimit: Int
    /// Whether the run may use expensive and constrained networks.
    let allowsExpensiveNetworkAccess: Bool
    let allowsConstrainedNetworkAccess: Bool
    /// Whether the delivery keeps the body in memory: then the transport's step collects it
    /// whole; else it passes the body up as a stream.
    let keepsBodyInMemory: Bool
    /// How many body bytes of a streamed body may wait for its reader before the transfer pauses.
    let bufferSize: Int
    /// Whether Convey itself reads a streamed body (a download's file writer) rather than the app.
    let readsBodyItself: Bool
    /// Redirects: whether they are followed, how many, and which header fields are credentials.
    let redirects: RedirectPolicy
    /// Which statuses throw `HTTPError`.
    let status: StatusCheck
    /// The decoder of a `Decodable` payload.
    let decoder: JSONDecoder
    /// The task's method and retry policy, behind the default `retryInterval(afterError:count:)`.
    let method: HTTPMethod
    let retryPolicy: RetryPolicy?
    /// What is known of the task's hooks: those known to be defaults are not called.
    let hooks: KnownHooks
    /// Whether the server's `didFinish(task:response:error:)` hears of the run: unless it is one
    /// attempt of something whose owner reports it once (`RunStart.reportsToServer`). The base
    /// implementation is nonisolated and does nothing, so a server that does not override it costs
    /// no visit to the actor.
    let callsServerDidFinish: Bool
    /// Time as the run sees it, and how it waits between attempts.
    let clock: any RunClock
    let retryWaiter: any RetryWaiting

    /// The plan for a run of `task` started as `start`, whose delivery asks for `deliveryTimeout`
    /// as its total timeout (a stream's own), keeps the body in memory or not, lets `bufferSize`
    /// bytes of a streamed body wait for its reader, and reads that body itself or not.
    @ConveyActor
    init<T: DownloadingTask>(task: T, start: RunStart, deliveryTimeout: Duration?, keepsBodyInMemory: Bool, bufferSize: Int,
                             readsBodyItself: Bool = false) {
        let server = task.server
        let taskConfiguration = task.configuration
        self.server = server
        transport = server.transport
        tag = task.sessionTag
        idleTimeout = (taskConfiguration?.timeout ?? server.storedConfiguration.defaultTimeout).clampedTimeout
        totalTimeout = (deliveryTimeout ?? taskConfiguration?.totalTimeout ?? server.storedConfiguration.defaultTotalTimeout)?.clampedTimeout
        sizeLimit = taskConfiguration?.maximumResponseSize ?? server.storedConfiguration.maximumResponseSize
        headSizeLimit = server.storedConfiguration.maximumResponseHeadSize
        allowsExpensiveNetworkAccess = taskConfiguration?.allowsExpensiveNetworkAccess ?? server.storedConfiguration.allowsExpensiveNetworkAccess
        allowsConstrainedNetworkAccess = taskConfiguration?.allowsConstrainedNetworkAccess ?? server.storedConfiguration.allowsConstrainedNetworkAccess
        self.keepsBodyInMemory = keepsBodyInMemory
        self.bufferSize = max(bufferSize, 1)
        self.readsBodyItself = readsBodyItself
        redirects = RedirectPolicy(
            follows: task.followsRedirects, maximum: server.storedConfiguration.maximumRedirects, credentials: server.storedConfiguration.redaction)
        status = StatusCheck(task: task)
        decoder = task.decoder
        hooks = KnownHooks.of(T.self)
        method = task.method
        retryPolicy = task.retryPolicy
        clock = server.storedConfiguration.runClock
        retryWaiter = server.storedConfiguration.retryWaiter

        callsServerDidFinish = start.reportsToServer
        template = RequestTemplate.make(for: task, server: server, url: start.url)
    }
}

/// How an attempt follows redirects: the task's choice, the server's limit, and the header fields
/// beyond the standard ones that are credentials (dropped on a hop to another origin).
struct RedirectPolicy: Sendable {
    let follows: Bool
    let maximum: Int
    let credentials: Redaction
}
