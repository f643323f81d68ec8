import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where an attempt's response body goes and what the run makes of it: the one step of
/// `TaskRunner`'s path that differs between ordinary tasks (memory, cache, decoding), downloads
/// to a file and streams.
@ConveyActor
protocol ResponseDelivery: Sendable {
    /// What a successful run returns as its payload.
    associatedtype Output: Sendable

    /// A total timeout that replaces the task's for this run, `nil` for the task's: a stream's
    /// own, which also covers its body.
    var totalTimeout: Duration? { get }

    /// Adjusts an attempt's request before `willSendRequest` sees it (a download's `Range`).
    func prepare(_ request: inout OutgoingRequest)

    /// Sends `request` through `send`, giving it a sink, and returns the response once the
    /// delivery has what validation needs: the head, and the body when it is kept in memory.
    /// `status` is the run's decision, which the runner applies; the delivery only reads it to
    /// keep an error body in memory instead of delivering it.
    /// It runs in the attempt's exchange task: cancelling that task stops it.
    func exchange(_ request: OutgoingRequest, status: StatusCheck, send: @escaping DeliverySend) async throws -> DeliveredExchange

    /// Turns a validated response into the run's payload, or throws when the delivery cannot
    /// take it (an event stream of another `Content-Type`): a failure of the run like any other.
    /// `deadline` is the run's, which a payload that outlives the run (a stream) keeps.
    func payload(from response: ServerResponse<Data>, url: URL?, deadline: RunDeadline?) async throws -> Output

    /// Calls the task's `didFinish(with:)` when `response` carries the task's own payload;
    /// does nothing for deliveries whose output is something else (a file, a stream).
    func callDidFinish(_ response: ServerResponse<Output>) async

    /// Lets go of whatever an attempt still holds after it failed (a stream's transfer).
    func abandon()
}

/// Sends one request into a sink, with the attempt's timeouts, in the calling task, following
/// redirects (`RedirectStage`): the sink sees only the final response.
typealias DeliverySend = @ConveyActor (OutgoingRequest, any ResponseBodySink, SendOptions) async throws -> SentExchange

/// How one send is made: whether the cache takes part, and how the transport reads the body.
struct SendOptions: Sendable {
    /// Whether each hop goes through the cache (`CacheCoordinator`): ordinary tasks, whose body is in memory.
    var answersFromCache = false
    /// Whether the body may be large (a download, a stream), so that reading it in large pieces pays.
    var expectsLargeBody = false
    /// Told each hop's request as it goes out: how a delivery that has its head before the send
    /// returns (a stream) learns which request the final response answers.
    var sendingHop: (@ConveyActor @Sendable (OutgoingRequest) -> Void)?
}

/// What one exchange gave the pipeline, before validation.
struct DeliveredExchange: Sendable {
    /// The request as sent (with any headers the cache or the delivery added).
    var request: OutgoingRequest
    /// The final response's head.
    var head: ResponseHead
    /// The body held in memory: all of it for ordinary tasks, the start of an error body otherwise.
    var data: Data
    /// What the exchange cost on the wire.
    var metrics: ExchangeMetrics
    /// Whether the cache took part.
    var cacheStatus: CacheStatus = .network
}

extension ResponseDelivery {
    var totalTimeout: Duration? { nil }
    func prepare(_ request: inout OutgoingRequest) {}
    func callDidFinish(_ response: ServerResponse<Output>) async {}
    func abandon() {}
}
