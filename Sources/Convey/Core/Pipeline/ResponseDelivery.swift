import Foundation

/// What sits at the top of a run's chain and what the run makes of its response: the one part of
/// `TaskRunner`'s path that differs between bodies kept in memory, downloads to a file and
/// streams. The chain, the checks and the hooks are the runner's.
///
/// A delivery takes part twice. Each attempt whose status the task's rule accepts is `stage`d:
/// a body in memory is decoded, a download's body is written to its partial file and checked, a
/// stream's type is checked; a failure there is the attempt's, which the run may retry. Then,
/// once the steps around the run returned the run's response, `payload` makes the run's payload
/// of it: of what the attempt staged when that response is the attempt's own, else of the
/// response a step made.
protocol ResponseDelivery: Sendable {
    /// What a successful run returns as its payload.
    associatedtype Output: Sendable
    /// What an attempt made of its response before the run's outcome is known.
    associatedtype Staged: Sendable

    /// A total timeout that replaces the task's for this run, `nil` for the task's: a stream's
    /// own, which also covers its body.
    var totalTimeout: Duration? { get }

    /// Whether the body is kept in memory, so that the cache may take part; else the body comes
    /// up the chain as a stream.
    var keepsBodyInMemory: Bool { get }

    /// How many bytes of a streamed body may wait for the reader before the transfer pauses.
    var bufferSize: Int { get }

    /// Whether Convey itself reads the streamed body (a download's file writer), at the disk's
    /// pace, rather than the app at a pace of its own: a transport that cannot pause a transfer
    /// may then wait for the reader instead of refusing the body (`ResponseBodySink.needsBackPressure`).
    var readsBodyItself: Bool { get }

    /// Adjusts an attempt's request before `willSendRequest` sees it (a download's `Range`), and
    /// returns what the attempt holds from now on (a claimed partial file), which the run's
    /// machine keeps. Runs on `@ConveyActor`, while the request is built.
    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)?

    /// An attempt's response whose status the task's rule turns into an `HTTPError`: what the
    /// delivery holds may be let go of differently (a `416` drops a partial file).
    func refused(_ head: ResponseHead, holding hold: (any AttemptHold)?)

    /// What the delivery makes of an attempt's response the status check accepted, with what the
    /// attempt holds; `exchange`'s body becomes what is passed up once this took its part (empty
    /// for a body written to its file). Throws when the delivery cannot take it (an event stream
    /// of another `Content-Type`, a file that cannot be written): a failure of the attempt.
    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws -> Staged

    /// The run's payload: made from `staged` when `exchange`'s body is the attempt's own (its head
    /// may be another, which a step around the run made), else from `exchange`'s body, which a step
    /// around the run made or changed (its status already checked).
    /// `hold` is what the successful attempt still holds, if any. `deadline` is the run's, which
    /// a payload that outlives the run (a stream) keeps.
    func payload(_ exchange: Exchange, staged: Staged?, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> Output

    /// Whether `Output` is the task's own payload, so that a success calls `didFinish(with:)`.
    var callsDidFinish: Bool { get }

    /// Calls the task's `didFinish(with:)` with `response`, when `callsDidFinish`.
    @ConveyActor
    func callDidFinish(_ response: ServerResponse<Output>) async
}

extension ResponseDelivery {
    var totalTimeout: Duration? { nil }
    var keepsBodyInMemory: Bool { false }
    var bufferSize: Int { ResponseStream<Data>.defaultBufferSize }
    var readsBodyItself: Bool { false }
    @ConveyActor func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? { nil }
    func refused(_ head: ResponseHead, holding hold: (any AttemptHold)?) {}
    var callsDidFinish: Bool { false }
    @ConveyActor func callDidFinish(_ response: ServerResponse<Output>) async {}
}
