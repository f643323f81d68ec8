import Foundation

/// Where an attempt's response body goes and what the run makes of it: the one part of
/// `TaskRunner`'s path that differs between bodies kept in memory, downloads to a file and
/// streams. A delivery supplies the sink and turns what arrived into its payload; the chain of
/// stages, the checks and the hooks are the runner's.
protocol ResponseDelivery: Sendable {
    /// What a successful run returns as its payload.
    associatedtype Output: Sendable

    /// A total timeout that replaces the task's for this run, `nil` for the task's: a stream's
    /// own, which also covers its body.
    var totalTimeout: Duration? { get }

    /// Whether the body is kept in memory, so that the cache may take part.
    var keepsBodyInMemory: Bool { get }

    /// Adjusts an attempt's request before `willSendRequest` sees it (a download's `Range`), and
    /// returns what the attempt holds from now on (a claimed partial file), which the run's
    /// machine keeps. Runs on `@ConveyActor`, while the request is built.
    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)?

    /// Sends `hop` through `chain` into the delivery's sink and returns the exchange once it has
    /// what the checks need: the head, and the body when it is kept in memory. `hold` is what
    /// `prepare` returned; the second result is what the exchange made the attempt hold besides
    /// (a stream's transfer), which the run's machine keeps from then on.
    func exchange(_ hop: Hop, through chain: ExchangeChain, attempt: AttemptContext,
                  holding hold: (any AttemptHold)?) async throws -> (Exchange, (any AttemptHold)?)

    /// Turns a checked exchange into the run's payload, with what the attempt held; throws when
    /// the delivery cannot take it (an event stream of another `Content-Type`): a failure of the
    /// run like any other. `deadline` is the run's, which a payload that outlives the run (a
    /// stream) keeps.
    func payload(from exchange: Exchange, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> Output

    /// The payload of a response a step around the run made or changed (`Interceptor`), which no
    /// attempt of the delivery received: decoded from its body, or a stream of it; a download to
    /// a file, whose file an attempt claims, cannot take one.
    func payload(answering exchange: Exchange, plan: RunPlan, deadline: RunDeadline?) async throws -> Output

    /// Whether `Output` is the task's own payload, so that a success calls `didFinish(with:)`.
    var callsDidFinish: Bool { get }

    /// Calls the task's `didFinish(with:)` with `response`, when `callsDidFinish`.
    @ConveyActor
    func callDidFinish(_ response: ServerResponse<Output>) async
}

extension ResponseDelivery {
    var totalTimeout: Duration? { nil }
    var keepsBodyInMemory: Bool { false }
    @ConveyActor func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? { nil }
    var callsDidFinish: Bool { false }
    @ConveyActor func callDidFinish(_ response: ServerResponse<Output>) async {}
}
