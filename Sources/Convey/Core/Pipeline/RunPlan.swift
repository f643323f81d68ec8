import Foundation

/// Everything one run needs from its task and server, read once on `@ConveyActor` before the
/// first attempt: the stages and the runner read it, never the task or the server. A class, so
/// that handing it from stage to stage is one reference, not a copy of every setting.
final class RunPlan: Sendable {
    /// The server the run goes to, for its hooks and credential refresh.
    let server: ConveyServer
    /// The transport of the server when the run started.
    let transport: any ConveyTransport
    /// The transport put in its place for the scope the run started in (`ScopedTransport`), if any.
    let scopedReplacement: ScopedTransport.Replacement?
    /// The task's `sessionTag`.
    let tag: String?
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
    /// Redirects: whether they are followed, how many, and which header fields are credentials.
    let redirects: RedirectPolicy
    /// How the cache takes part, when the server has one and the delivery keeps bodies in memory.
    let cache: CachePolicy?
    /// Which statuses throw `HTTPError`.
    let status: StatusCheck
    /// The decoder of a `Decodable` payload.
    let decoder: JSONDecoder
    /// What echo and recording do with each attempt.
    let echo: EchoPlan
    /// The task's method and retry policy, behind the default `retryInterval(afterError:count:)`.
    let method: HTTPMethod
    let retryPolicy: RetryPolicy?
    /// What is known of the task's hooks: those known to be defaults are not called.
    let hooks: KnownHooks
    /// Whether the server's `didFinish(task:response:error:)` must be called: always, unless the
    /// server is a plain `ConveyServer`, whose hook does nothing (a subclass's override may call
    /// `super`, so running the base implementation says nothing about whether it was overridden),
    /// or the run is one attempt of a delivery whose owner calls it once (`OwnedAttemptTask`).
    let callsServerDidFinish: Bool
    /// The URL every attempt goes to when the run is an `OwnedAttemptTask`'s, instead of one
    /// built under the server's remote.
    let absoluteURL: URL?
    /// The upload progress handler, relayed off the transport's thread.
    let uploadProgress: UploadProgressRelay?
    /// Time as the run sees it, and how it waits between attempts.
    let clock: any RunClock
    let retryWaiter: any RetryWaiting

    /// The plan for a run of `task` whose delivery asks for `deliveryTimeout` as its total
    /// timeout (a stream's own) and `usesCache` (a body in memory).
    @ConveyActor
    init<T: DownloadingTask>(task: T, deliveryTimeout: Duration?, usesCache: Bool) {
        let server = task.server
        let taskConfiguration = task.configuration
        let owned = task as? any OwnedAttemptTask
        self.server = server
        transport = server.transport
        scopedReplacement = ScopedTransport.replacement
        tag = task.sessionTag
        idleTimeout = (taskConfiguration?.timeout ?? server.configuration.defaultTimeout).clampedTimeout
        totalTimeout = (deliveryTimeout ?? taskConfiguration?.totalTimeout ?? server.configuration.defaultTotalTimeout)?.clampedTimeout
        sizeLimit = taskConfiguration?.maximumResponseSize ?? server.configuration.maximumResponseSize
        headSizeLimit = server.configuration.maximumResponseHeadSize
        allowsExpensiveNetworkAccess = taskConfiguration?.allowsExpensiveNetworkAccess ?? server.configuration.allowsExpensiveNetworkAccess
        allowsConstrainedNetworkAccess = taskConfiguration?.allowsConstrainedNetworkAccess ?? server.configuration.allowsConstrainedNetworkAccess
        redirects = RedirectPolicy(
            follows: task.followsRedirects, maximum: server.configuration.maximumRedirects, credentials: server.configuration.redaction)
        cache = usesCache
            ? CachePolicy(task: task, server: server, idleTimeout: idleTimeout, sizeLimit: sizeLimit, attemptLabel: owned?.attemptLabel) : nil
        status = StatusCheck(task: task)
        decoder = task.decoder
        hooks = KnownHooks.of(T.self)
        echo = EchoPlan(task: task, server: server, asksStyleForData: hooks.mustCall(.echoStyleForData), attemptLabel: owned?.attemptLabel)
        method = task.method
        retryPolicy = task.retryPolicy
        callsServerDidFinish = type(of: server) != ConveyServer.self && owned == nil
        absoluteURL = owned?.absoluteURL
        uploadProgress = UploadProgressRelay.relay(for: task)
        clock = server.configuration.runClock
        retryWaiter = server.configuration.retryWaiter
    }
}

extension RunPlan {
    /// The transport of a hop of attempt `attempt`: the server's, or its replacement in the run's scope.
    func transport(forAttempt attempt: Int) -> any ConveyTransport {
        guard let scopedReplacement else { return transport }
        return scopedReplacement(transport, ExchangeOrigin(taskType: String(describing: echo.taskType), attempt: attempt))
    }
}

/// How an attempt follows redirects: the task's choice, the server's limit, and the header fields
/// beyond the standard ones that are credentials (dropped on a hop to another origin).
struct RedirectPolicy: Sendable {
    let follows: Bool
    let maximum: Int
    let credentials: Redaction
}

/// A task whose run is one attempt of a longer delivery (an outbox item): it goes to a URL fixed
/// beforehand instead of one built under the server's remote, echo and records name the delivery,
/// and its owner calls the server's `didFinish(task:response:error:)` once, for the final outcome,
/// instead of every run. Read once per run, into its `RunPlan`.
protocol OwnedAttemptTask: DownloadingTask {
    /// The URL every attempt is sent to.
    var absoluteURL: URL { get }
    /// What echo and recording say about the delivery.
    var attemptLabel: OutboxAttemptLabel { get }
}
