import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a task: the one place a request's path lives, top to bottom.
///
/// ```
/// download() ─┬─ @ConveyActor: plan the run (RunPlan, with its RunParts), build attempt 1, willSendRequest
///             │
///             ├─ steps around the run (Interceptor), outermost first, then:
///             │
///             ├─ attempt: chain ─▶ RedirectStage ─▶ feature stages (cache, upload progress) ─▶ exchange steps (Interceptor)
///             │                    ─▶ stages nearest the wire (HAR answers) ─▶ TransportStage ─▶ transport
///             │           the delivery's sink ◀─ head and body ◀──────────────────────────────────────────┘
///             │           didReceiveResponse (@ConveyActor, when the task has it) → status → payload
///             │
///             ├─ the run's machine decides: succeed │ refresh credentials │ wait and retry │ fail
///             │
///             └─ @ConveyActor, when a hook is there to call: didFinish(with:), didSucceed / didFail,
///                the server's didFinish(task:response:error:)
/// ```
///
/// Observers (`RunObserver`: the app's, echo, recording, HAR capture) hear of each step as a
/// `RunEvent`, in the run's own task.
///
/// The runner itself runs in its caller's task, off `@ConveyActor`: the actor is visited to read
/// the task and build each attempt's request, and after that only for hooks the task (or a
/// server subclass) really has. Which hooks a task type has is learnt by calling them
/// (`KnownHooks`): a hook is skipped only once its default implementation was seen running for
/// that type.
///
/// The run's `RunStateMachine` (inside its `ActiveRun`) takes every event — an attempt's steps
/// and end, a refresh's, a wait's, a stop — and returns the next action, which the runner carries
/// out. The machine's states own what the run waits on and what an attempt holds (a claimed file,
/// a stream's transfer), so a stop cancels exactly that and a failure lets it go. The app's steps
/// run in the caller's task too: its cancellation ends a step's wait at once; a stop from
/// elsewhere (a tag, the deadline) ends the run when the step goes on.
struct TaskRunner<T: DownloadingTask>: Sendable {
    let task: T

    /// Runs the task with its body in memory, decoded into its payload.
    func run() async throws -> ServerResponse<T.DownloadPayload> {
        try await run(MemoryDelivery(task: task))
    }

    /// Runs the task as one `ActiveRun`, in the caller's task. Cancellation by tag or type and the
    /// total timeout stop what the run waits on, never the caller's task; the caller's task being
    /// cancelled reaches the run's machine through the one cancellation handler here. The hooks
    /// that end a run run once its outcome is known, after the steps around it.
    func run<Delivery: ResponseDelivery>(_ delivery: Delivery) async throws -> ServerResponse<Delivery.Output> {
        let (plan, run, first) = await Self.start(task, delivery: delivery)
        defer { run.end() }
        await plan.observers.emit(.runStarted, attempt: 1)
        let outcome: Result<ServerResponse<Delivery.Output>, any Error>
        do {
            outcome = .success(try await withTaskCancellationHandler {
                try await plan.parts.runSteps.isEmpty
                    ? drive(delivery, plan: plan, run: run, first: first)
                    : stepped(delivery, plan: plan, run: run, first: first)
            } onCancel: {
                run.cancel()
            })
        } catch {
            outcome = .failure(error is CancellationError ? ConveyError.cancelled : error)
        }
        run.abandon()
        switch outcome {
        case .success(let response):
            await Self.finish(task, delivery: delivery, plan: plan, response: response)
            await plan.observers.emit(.runFinished(ServerResponse(payload: response.data, exchange: response.exchange), error: nil),
                                      attempt: run.attemptNumber)
            return response
        case .failure(let error):
            Defects.assertNone(error)
            let lastExchange = run.lastExchange
            await Self.finish(task, plan: plan, failure: error, lastExchange: lastExchange)
            await plan.observers.emit(.runFinished(lastExchange.map { ServerResponse(payload: $0.body, exchange: $0) }, error: error),
                                      attempt: run.attemptNumber)
            throw error
        }
    }

    /// The run inside its steps: each step gets the first attempt's request and, as its `next`,
    /// the steps after it, the last of which makes the run's attempts (`drive`). The response the
    /// outermost step returns is the run's: the one the attempts made, or another, whose status
    /// and payload then follow from it.
    private func stepped<Delivery: ResponseDelivery>(_ delivery: Delivery, plan: RunPlan, run: ActiveRun,
                                                     first: BuiltAttempt) async throws -> ServerResponse<Delivery.Output> {
        let steps = plan.parts.runSteps
        guard !steps.isEmpty, case .success(let original)? = first.request else {
            return try await drive(delivery, plan: plan, run: run, first: first)
        }
        let token = run.identity
        var made: ServerResponse<Delivery.Output>?
        var sends = 0
        let answer = try await Self.step(0, of: steps, original) { request in
            try FieldValidation.check(request, source: .interceptor)
            let changes = RequestChanges(from: original, to: request)
            sends += 1
            let response: ServerResponse<Delivery.Output>
            if sends == 1 {
                var firstAttempt = first
                firstAttempt.request = .success(request)
                response = try await drive(delivery, plan: plan, run: run, first: firstAttempt, changes: changes)
            } else {
                // A step sending the request again: the run goes on with a new attempt.
                try run.sendingAgain().proceedOrThrow()
                response = try await drive(delivery, plan: plan, run: run, first: nil, changes: changes)
            }
            made = response
            var exchange = response.exchange
            exchange.passedOnBy = token
            return ServerResponse(payload: exchange.body, exchange: exchange)
        }
        if let stopped = run.lateStopError { throw stopped }
        if let made, answer.exchange.passedOnBy == token { return made }
        // The steps answered on their own, or changed what the attempts made.
        let exchange = answer.exchange
        run.completed(exchange)
        if plan.status.throwsError(forStatus: exchange.head.statusCode) {
            throw HTTPError(statusCode: exchange.head.statusCode, body: exchange.body, headers: exchange.head.fields.combined,
                            url: exchange.request.url, method: exchange.request.method)
        }
        return ServerResponse(payload: try await delivery.payload(answering: exchange, plan: plan, deadline: run.deadline), exchange: exchange)
    }

    /// Step `index` of `steps` and those after it, the last of which passes the request to `attempts`.
    private static func step(_ index: Int, of steps: [any Interceptor], _ request: OutgoingRequest,
                             attempts: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        guard index < steps.count else { return try await attempts(request) }
        return try await steps[index].intercept(request) { request in try await step(index + 1, of: steps, request, attempts: attempts) }
    }

    /// The run's attempts: carry out the machine's action, hand what came of it to the machine as
    /// the next event, until the action ends the run. The first action is always an attempt, with
    /// `first` when it is built already; each attempt built here gets the steps' `changes`.
    private func drive<Delivery: ResponseDelivery>(_ delivery: Delivery, plan: RunPlan, run: ActiveRun, first: BuiltAttempt?,
                                                   changes: RequestChanges? = nil) async throws -> ServerResponse<Delivery.Output> {
        let chain = ExchangeChain(plan: plan)
        var next = first
        var credentialGeneration = first?.credentialGeneration ?? 0
        var response: ServerResponse<Delivery.Output>?
        var action = RunStateMachine.RunAction.startAttempt
        while true {
            switch action {
            case .startAttempt:
                var built = if let next { next } else { await Self.build(task, delivery: delivery, plan: plan, run: run) }
                if next == nil, let changes, case .success(var request)? = built.request {
                    changes.apply(to: &request)
                    built.request = .success(request)
                }
                next = nil
                credentialGeneration = built.credentialGeneration
                action = await attempt(built, delivery: delivery, chain: chain, plan: plan, run: run, response: &response)
            case .refreshCredentials(let unauthorized, let release):
                release?.release()
                let refreshed = await Self.refreshCredentials(plan.server, after: unauthorized, sentGeneration: credentialGeneration)
                await plan.observers.emit(.credentialRefresh(refreshed: refreshed), attempt: run.attemptNumber)
                action = run.step { $0.credentialRefreshEnded(refreshed: refreshed, at: $1) }
            case .waitToRetry(let duration, let release):
                release?.release()
                action = await run.waitToRetry(duration, using: plan.retryWaiter)
            case .succeed:
                // The machine succeeds a run only after an attempt made its payload.
                guard let response else {
                    action = run.step { $0.defect(RunnerDefect(description: "Convey internal error: the run's machine succeeded without a payload")) }
                    continue
                }
                return response
            case .proceed:
                // Only a step within an attempt proceeds; the attempt's end always decides.
                action = run.step { $0.defect(RunnerDefect(description: "Convey internal error: the run's machine said to proceed after an attempt")) }
            case .fail(let error, let release):
                release?.release()
                throw error
            }
        }
    }

    /// One attempt of the run, top to bottom: send through the chain into the delivery's sink →
    /// `didReceiveResponse` → check the status → the delivery's payload. Its end is an event for
    /// the machine, whose action comes back; `response` becomes the run's response when the
    /// attempt made its payload. The run keeps the attempt's exchange when one completed.
    private func attempt<Delivery: ResponseDelivery>(_ built: BuiltAttempt, delivery: Delivery, chain: ExchangeChain, plan: RunPlan,
                                                     run: ActiveRun, response: inout ServerResponse<Delivery.Output>?) async -> RunStateMachine.RunAction {
        await plan.observers.emit(.attemptStarted, attempt: built.number)
        var action = RunStateMachine.RunAction.startAttempt
        var completed: Exchange?
        let startedAt = Date()
        let clock = ContinuousClock.now
        var sentRequest: OutgoingRequest?
        var failure: (any Error)?
        do {
            // Built on the actor: the request as `willSendRequest` returned it.
            guard let request = try built.request?.get() else { throw ConveyError.cancelled }
            sentRequest = request

            // Send: through the chain, into the delivery's sink.
            try run.step { machine in machine.exchangeStarting(url: request.url) }.proceedOrThrow()
            var exchange: Exchange
            var hold = built.hold
            do {
                let context = AttemptContext(plan: plan, number: built.number, cancellation: ExchangeCancellation(run: run))
                let acquired: (any AttemptHold)?
                (exchange, acquired) = try await delivery.exchange(Hop(request: request, bodyFile: built.bodyFile), through: chain,
                                                                   attempt: context, holding: built.hold)
                if let acquired {
                    hold = acquired
                    if case .fail(let error, _) = run.step({ machine in machine.holding(acquired) }) {
                        acquired.release()
                        throw error
                    }
                }
            } catch {
                throw TransportErrors.map(error, url: request.url, timeout: plan.idleTimeout)
            }
            try run.step { machine in machine.responseReceived() }.proceedOrThrow()
            exchange.startedAt = startedAt
            exchange.duration = clock.duration(to: .now)
            exchange.attemptNumber = built.number
            sentRequest = exchange.request
            completed = exchange
            run.completed(exchange)

            // Receive: the task's own look at the response, on the actor.
            if plan.hooks.mustCall(.didReceiveResponse) { try await Self.didReceiveResponse(task, exchange: exchange) }

            // Check: the status the task's rule makes an error.
            let head = exchange.head
            if plan.status.throwsError(forStatus: head.statusCode) {
                throw HTTPError(statusCode: head.statusCode, body: exchange.body, headers: head.fields.combined,
                                url: exchange.request.url, method: exchange.request.method)
            }

            // Payload: decoded, a finished file, or a stream (which keeps the run's deadline).
            let payload = try await delivery.payload(from: exchange, holding: hold, plan: plan, deadline: run.deadline)
            response = ServerResponse(payload: payload, exchange: exchange)
            action = run.step { machine in machine.payloadReady() }
        } catch {
            failure = error is CancellationError ? ConveyError.cancelled : error
        }
        if let failure {
            if failure is any ConveyDefect {
                // A defect in Convey ends the run as it is: never retried.
                action = run.step { $0.defect(failure) }
            } else {
                action = await failed(failure, finally: built.isFinal, plan: plan, run: run)
            }
        }
        if let stagedFile = built.stagedFile { try? FileManager.default.removeItem(at: stagedFile) }
        if !plan.observers.isEmpty {
            let shown = completed.map { ServerResponse(payload: $0.body, exchange: $0) }
            await plan.observers.emit(.attemptFinished(request: sentRequest, response: shown, error: action.failure ?? failure,
                                                       duration: clock.duration(to: .now)), attempt: built.number)
            if case .waitToRetry(let delay, _) = action, let failure {
                await plan.observers.emit(.retryScheduled(after: failure, delay: delay), attempt: built.number)
            }
        }
        return action
    }

    /// The machine's action after an attempt failed with `error`: asks the task's
    /// `retryInterval(afterError:count:)` (on the actor, when the task has its own) only where
    /// the machine would, and never for an attempt that could not start (`finally`).
    private func failed(_ error: any Error, finally: Bool, plan: RunPlan, run: ActiveRun) async -> RunStateMachine.RunAction {
        var asked: TimeInterval??
        if !finally, plan.hooks.mustCall(.retryInterval), let count = run.step({ machine in machine.asksRetryInterval(after: error) }) {
            asked = .some(await Self.retryInterval(task, after: error, count: count, plan: plan))
        }
        return run.step { machine, now in
            machine.attemptFailed(error, at: now) { error, count in
                if finally { return nil }
                if let asked { return asked }
                return plan.retryPolicy?.retryInterval(afterError: error, count: count, method: plan.method)
            }
        }
    }
}

/// One attempt's request as built on `@ConveyActor`, or why it could not be built.
struct BuiltAttempt: Sendable {
    /// The attempt's number, from 1.
    let number: Int
    /// The request, or why it could not be built.
    var request: Result<OutgoingRequest, any Error>?
    /// A file whose contents are the body, streamed from disk.
    var bodyFile: URL?
    /// A file staged for this attempt only, removed once it is over.
    var stagedFile: URL?
    /// What the delivery holds for the attempt (a claimed partial file).
    var hold: (any AttemptHold)?
    /// The server's credential generation when the request was built.
    var credentialGeneration = 0
    /// Whether the attempt's failure ends the run whatever `retryInterval` says: the run could not
    /// start (a disabled server, no remote, an invalid URL), which no retry changes.
    var isFinal = false
}

// MARK: - On @ConveyActor: reading the task, and its hooks

extension TaskRunner {
    /// Plans the run, makes it cancellable, and builds its first attempt: the run's first visit
    /// to the actor.
    @ConveyActor
    private static func start<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery) async -> (RunPlan, ActiveRun, BuiltAttempt) {
        ActorVisits.entered(.start, for: T.self)
        let plan = RunPlan(task: task, deliveryTimeout: delivery.totalTimeout, keepsBodyInMemory: delivery.keepsBodyInMemory)
        let run = ActiveRun(tag: plan.tag, taskType: T.self, totalTimeout: plan.totalTimeout, clock: plan.clock)
        run.begin()
        return (plan, run, await build(task, delivery: delivery, plan: plan, run: run))
    }

    /// Builds an attempt's request: the body, the layered fields, the delivery's own fields, then
    /// `willSendRequest` (when the task has it) and the fields it returned checked.
    @ConveyActor
    private static func build<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, plan: RunPlan, run: ActiveRun) async -> BuiltAttempt {
        ActorVisits.entered(.build, for: T.self)
        var built = BuiltAttempt(number: run.attemptNumber)
        do {
            try run.step { machine, now in machine.attemptStarting(at: now) }.proceedOrThrow()
            let template: RequestTemplate
            switch plan.template {
            case .success(let made): template = made
            case .failure(let error):
                built.isFinal = true
                throw error
            }
            let server = plan.server
            built.credentialGeneration = server.credentialRefresh.generation
            let body = try await task.requestBody
            if case .file(let file, let removeWhenDone) = body?.content {
                built.bodyFile = file
                if removeWhenDone { built.stagedFile = file }
            }
            var request = try await RequestBuilder.request(from: template, for: task, body: body)
            if let hold = try delivery.prepare(&request) {
                if case .fail(let error, _) = run.step({ machine in machine.holding(hold) }) {
                    hold.release()
                    throw error
                }
                built.hold = hold
            }
            if plan.hooks.mustCall(.willSendRequest) {
                guard let parameter = T.HookRequest.hookParameter(request) else {
                    throw ConveyError.invalidURL(request.url.absoluteString, reason: "willSendRequest takes a \(T.HookRequest.self), which is no request: declare it with OutgoingRequest")
                }
                request = try await Hooks.call(.willSendRequest, of: T.self) { try await task.willSendRequest(request: parameter) }
                    .outgoingRequest()
                try FieldValidation.check(request, source: .willSendRequest)
            }
            built.request = .success(RequestBuilder.movingUserInfoToAuthorization(request))
        } catch {
            built.request = .failure(error)
        }
        return built
    }

    @ConveyActor
    private static func didReceiveResponse(_ task: T, exchange: Exchange) async throws {
        ActorVisits.entered(.didReceiveResponse, for: T.self)
        guard let response = T.HookResponse.hookParameter(exchange.head) else { return }
        try await Hooks.call(.didReceiveResponse, of: T.self) { try await task.didReceiveResponse(response: response, data: exchange.body) }
    }

    /// The task's own answer; when its hook turns out to be the default, the answer of the retry
    /// policy the run read when it started, as every later run of the type gets without asking.
    @ConveyActor
    private static func retryInterval(_ task: T, after error: any Error, count: Int, plan: RunPlan) -> TimeInterval? {
        ActorVisits.entered(.retryInterval, for: T.self)
        let asked = Hooks.callNow(.retryInterval, of: T.self) { task.retryInterval(afterError: error, count: count) }
        if !KnownHooks.of(T.self).mustCall(.retryInterval) {
            return plan.retryPolicy?.retryInterval(afterError: error, count: count, method: plan.method)
        }
        return asked
    }

    @ConveyActor
    private static func refreshCredentials(_ server: ConveyServer, after unauthorized: HTTPError, sentGeneration: Int) async -> Bool {
        ActorVisits.entered(.refreshCredentials, for: T.self)
        return await server.credentialRefresh.refresh(for: server, after: unauthorized, sentGeneration: sentGeneration)
    }

    /// The success hooks, in their order, in one visit to the actor (none when there is none to call).
    private static func finish<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, plan: RunPlan,
                                                           response: ServerResponse<Delivery.Output>) async {
        let callsDidFinish = delivery.callsDidFinish && plan.hooks.mustCall(.didFinish)
        guard callsDidFinish || plan.hooks.mustCall(.didSucceed) || plan.callsServerDidFinish else { return }
        await succeeded(task, delivery: delivery, plan: plan, response: response, callsDidFinish: callsDidFinish)
    }

    @ConveyActor
    private static func succeeded<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, plan: RunPlan,
                                                              response: ServerResponse<Delivery.Output>, callsDidFinish: Bool) async {
        ActorVisits.entered(.succeeded, for: T.self)
        if callsDidFinish { await delivery.callDidFinish(response) }
        let exchange = ServerResponse(payload: response.data, exchange: response.exchange)
        if plan.hooks.mustCall(.didSucceed) { await Hooks.call(.didSucceed, of: T.self) { await task.didSucceed(with: exchange) } }
        if plan.callsServerDidFinish { await plan.server.didFinish(task: task, response: exchange, error: nil) }
    }

    /// The failure hooks, in their order, in one visit to the actor (none when there is none to call).
    private static func finish(_ task: T, plan: RunPlan, failure: any Error, lastExchange: Exchange?) async {
        guard plan.hooks.mustCall(.didFail) || plan.callsServerDidFinish else { return }
        await failed(task, plan: plan, failure: failure, lastExchange: lastExchange)
    }

    @ConveyActor
    private static func failed(_ task: T, plan: RunPlan, failure: any Error, lastExchange: Exchange?) async {
        ActorVisits.entered(.failed, for: T.self)
        if plan.hooks.mustCall(.didFail) { await Hooks.call(.didFail, of: T.self) { await task.didFail(with: failure) } }
        if plan.callsServerDidFinish {
            await plan.server.didFinish(task: task, response: lastExchange.map { ServerResponse(payload: $0.body, exchange: $0) }, error: failure)
        }
    }
}
