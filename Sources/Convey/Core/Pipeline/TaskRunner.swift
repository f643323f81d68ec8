import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a task: the one place a request's path lives, top to bottom.
///
/// ```
/// download() ─┬─ @ConveyActor: plan the run (RunPlan), make its chain (ChainMaking), build attempt 1, willSendRequest
///             │
///             ├─ the chain, one step of one kind after another (RunChain lists them):
///             │    steps around the run (the app's) → the run's own step, attempts(): each attempt
///             │    ─▶ redirects ─▶ the cache ─▶ … ─▶ the app's exchange steps ─▶ … ─▶ the transport
///             │    ◀── the response: its head, and its body as a value (in memory, or a stream the top pulls)
///             │    each attempt: didReceiveResponse (@ConveyActor, when the task has it) → status → the
///             │    delivery's part (decode, write the file, check a stream), and the run's machine decides:
///             │    succeed │ refresh credentials │ wait and retry │ fail
///             │
///             ├─ the top: the payload of the response the outermost step returned
///             │
///             └─ the hooks that end the run: didFinish(with:), didSucceed / didFail (@ConveyActor, when
///                the task has them), the server's didFinish(task:response:error:)
/// ```
///
/// Observers (`RunObserver`: the app's, echo, recording) hear of each step as a `RunEvent`, in
/// the run's own task.
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
/// a body being read), so a stop cancels exactly that and a failure lets it go. The steps run in
/// the caller's task too: its cancellation ends a step's wait at once; a stop from elsewhere (a
/// tag, the deadline) ends the run when the step goes on.
struct TaskRunner<T: DownloadingTask>: Sendable {
    let task: T
    /// What makes the run's chain: `RunChain`, the one list of its steps.
    let chain: any ChainMaking.Type
    /// How the run starts: its URL when given whole, whether the server hears of it, its values.
    var start = RunStart()

    init(task: T, chain: any ChainMaking.Type, start: RunStart = RunStart()) {
        self.task = task
        self.chain = chain
        self.start = start
    }

    /// Runs the task with its body in memory, decoded into its payload.
    func run() async throws -> ServerResponse<T.DownloadPayload> {
        try await run(MemoryDelivery(task: task))
    }

    /// Runs the task as one `ActiveRun`, in the caller's task: its chain from the top, then the
    /// payload of the response the outermost step returned. Cancellation by tag or type and the
    /// total timeout stop what the run waits on, never the caller's task; the caller's task being
    /// cancelled reaches the run's machine through the one cancellation handler here. The hooks
    /// that end a run run once its outcome is known, after the steps around it.
    func run<Delivery: ResponseDelivery>(_ delivery: Delivery) async throws -> ServerResponse<Delivery.Output> {
        let (run, attempts, first) = await Self.start(task, delivery: delivery, start: start, chain: chain)
        defer { run.end() }
        await run.observers.emit(.runStarted, attempt: 1)
        let outcome: Result<ServerResponse<Delivery.Output>, any Error>
        do {
            outcome = .success(try await withTaskCancellationHandler {
                try await respond(delivery, run: run, attempts: attempts, first: first)
            } onCancel: {
                run.cancel()
            })
        } catch {
            attempts.release()
            outcome = .failure(error is CancellationError ? ConveyError.cancelled : error)
        }
        run.abandon()
        switch outcome {
        case .success(let response):
            await Self.finish(task, delivery: delivery, plan: run.plan, response: response)
            await run.observers.emit(.runFinished(ServerResponse(payload: response.data, exchange: response.exchange), error: nil),
                                     attempt: run.attemptNumber)
            return response
        case .failure(let error):
            Defects.assertNone(error)
            let lastExchange = run.lastExchange
            await Self.finish(task, plan: run.plan, failure: error, lastExchange: lastExchange)
            await run.observers.emit(.runFinished(lastExchange.map { ServerResponse(payload: $0.data, exchange: $0) }, error: error),
                                     attempt: run.attemptNumber)
            throw error
        }
    }

    /// The run's chain from the top with the first attempt's request, then the payload of what the
    /// outermost step returned: the attempts' own response, whose payload they made, or another,
    /// whose status and payload then follow from it.
    private func respond<Delivery: ResponseDelivery>(_ delivery: Delivery, run: ActiveRun, attempts: RunStep<T, Delivery>,
                                                     first: BuiltAttempt) async throws -> ServerResponse<Delivery.Output> {
        let plan = run.plan
        let request: TransportRequest
        switch first.request {
        case .success(let built)?:
            request = Self.transportRequest(built, bodyFile: first.bodyFile, plan: plan, run: run)
        case .failure, nil:
            // A run whose first request could not be built is its attempts' failure: the steps
            // around the run get nothing to change.
            try await attempts.answerUnbuilt(run: run)
        }
        var final = try await run.chain.proceed(request, context: StepContext(run: run, attempt: 1))
        if let stopped = run.lateStopError {
            final.body.close()
            throw stopped
        }
        let made = attempts.made
        // With no step around the run, what the attempts made is what came back.
        if let made, !attempts.hasStepsAround || final.isSame(as: made.exchange) {
            let payload = try await delivery.payload(final, staged: made.staged, holding: made.hold, plan: plan, deadline: run.deadline)
            return ServerResponse(payload: payload, exchange: final)
        }
        // A step around the run answered on its own, or changed what the attempts made (a body it
        // no longer reads ends when the last reference to it goes). A run that keeps its body in
        // memory gets it there, whatever the step handed on.
        if plan.keepsBodyInMemory { final.body = .data(try await final.body.collected(limit: plan.sizeLimit, url: final.head.url)) }
        run.completed(final)
        if plan.status.throwsError(forStatus: final.head.statusCode) {
            let body = await final.body.prefix(HTTPError.bodyLimit(for: final.body))
            throw HTTPError(statusCode: final.head.statusCode, body: body, headers: final.head.fields.combined,
                            url: final.request.url, method: final.request.method)
        }
        run.abandon()
        // A changed head over the attempts' own body keeps what they made of it (a decoded payload,
        // a file written); a body of the step's own is made into the payload anew.
        let staged = made.flatMap { made in final.body.isSame(as: made.exchange.body) ? made.staged : nil }
        let payload = try await delivery.payload(final, staged: staged, holding: made?.hold, plan: plan, deadline: run.deadline)
        return ServerResponse(payload: payload, exchange: final)
    }

    /// The request a transport gets for `request`, with the run's settings.
    static func transportRequest(_ request: OutgoingRequest, bodyFile: URL?, plan: RunPlan, run: ActiveRun) -> TransportRequest {
        var sent = TransportRequest(request: request, bodyFile: bodyFile, timeout: plan.idleTimeout,
                                    allowsExpensiveNetworkAccess: plan.allowsExpensiveNetworkAccess,
                                    allowsConstrainedNetworkAccess: plan.allowsConstrainedNetworkAccess)
        sent.maximumResponseHeadSize = plan.headSizeLimit
        sent.expectsLargeBody = !plan.keepsBodyInMemory
        sent.cancellation = ExchangeCancellation(run: run)
        return sent
    }
}

/// The run itself as a step of its chain: every attempt, retry, credential refresh and wait,
/// owned by the run's machine. Below it, each attempt goes through the rest of the chain
/// (redirects, the cache, the app's exchange steps, the transport); above it, the app's steps
/// around the run see the outcome. A class, so that the run keeps what its attempts made.
final class RunStep<T: DownloadingTask, Delivery: ResponseDelivery>: ChainStep {
    private let task: T
    private let delivery: Delivery
    private let state: InlineLocked<State>

    /// The response the attempts made, with what the delivery made of it and what the successful
    /// attempt still holds (a claimed file), for the top to turn into the run's payload.
    struct Made: Sendable {
        let exchange: Exchange
        let staged: Delivery.Staged
        let hold: (any AttemptHold)?
    }

    private struct State: Sendable {
        /// The first attempt, built while the run was planned; taken by the first send.
        var first: BuiltAttempt?
        /// The first attempt's request as built, which a step around the run may change: each
        /// later attempt, built afresh, gets the same changes. `nil` with no step around the run.
        var original: OutgoingRequest?
        var stepsAround = false
        var made: Made?
    }

    init(task: T, delivery: Delivery) {
        self.task = task
        self.delivery = delivery
        state = InlineLocked(State())
    }

    /// The first attempt, built once the run was made; `stepsAround` when steps of the app's or
    /// tracing's come before this one, which may change the request and the response.
    func begin(with first: BuiltAttempt, stepsAround: Bool) {
        var original: OutgoingRequest?
        if stepsAround, case .success(let request)? = first.request { original = request }
        state.withLock { state in
            state.first = first
            state.original = original
            state.stepsAround = stepsAround
        }
    }

    /// Whether steps come before this one.
    var hasStepsAround: Bool { state.value.stepsAround }

    /// What the attempts made, once they succeeded.
    var made: Made? { state.value.made }

    /// Lets go of what a successful attempt still holds, when the run fails after it.
    func release() {
        let made = state.withLock { state in
            defer { state.made = nil }
            return state.made
        }
        made?.hold?.release()
        made?.exchange.body.close()
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let (first, original, previous) = state.withLock { state in
            defer {
                state.first = nil
                state.made = nil
            }
            return (state.first, state.original, state.made)
        }
        var changes: RequestChanges?
        if let original, request.request != original {
            try FieldValidation.check(request.request, source: .interceptor)
            changes = RequestChanges(from: original, to: request.request)
        }
        var firstAttempt: BuiltAttempt?
        if var first {
            first.request = .success(request.request)
            firstAttempt = first
        } else {
            // A step around the run sending the request again: the run goes on with a new attempt.
            previous?.hold?.release()
            try context.run.sendingAgain().proceedOrThrow()
        }
        let made = try await attempts(first: firstAttempt, changes: changes, context: context, next: next)
        state.withLock { $0.made = made }
        return made.exchange
    }

    /// The run of a task whose first request could not be built (no remote, a disabled server, an
    /// invalid URL or field): its attempts fail as the machine decides, with no step around them.
    func answerUnbuilt(run: ActiveRun) async throws -> Never {
        let first = state.withLock { state in
            defer { state.first = nil }
            return state.first
        }
        _ = try await attempts(first: first, changes: nil, context: StepContext(run: run, attempt: 1), next: ChainNext.none)
        throw RunnerDefect(description: "Convey internal error: a run whose request could not be built succeeded")
    }

    /// The run's attempts: carry out the machine's action, hand what came of it to the machine as
    /// the next event, until the action ends the run. The first action is always an attempt, with
    /// `first` when it is built already; each attempt built here gets the steps' `changes`.
    private func attempts(first: BuiltAttempt?, changes: RequestChanges?, context: StepContext, next: ChainNext) async throws -> Made {
        let run = context.run
        let plan = run.plan
        var pending = first
        var credentialGeneration = first?.credentialGeneration ?? 0
        var made: Made?
        var action = RunStateMachine.RunAction.startAttempt
        while true {
            switch action {
            case .startAttempt:
                var built = if let pending { pending } else { await TaskRunner.build(task, delivery: delivery, plan: plan, run: run) }
                if pending == nil, let changes, case .success(var request)? = built.request {
                    changes.apply(to: &request)
                    built.request = .success(request)
                }
                pending = nil
                credentialGeneration = built.credentialGeneration
                action = await attempt(built, context: context, next: next, made: &made)
            case .refreshCredentials(let unauthorized, let release):
                release?.release()
                let refreshed = await TaskRunner<T>.refreshCredentials(plan.server, after: unauthorized, sentGeneration: credentialGeneration)
                await run.observers.emit(.credentialRefresh(refreshed: refreshed), attempt: run.attemptNumber)
                action = run.step { $0.credentialRefreshEnded(refreshed: refreshed, at: $1) }
            case .waitToRetry(let duration, let release):
                release?.release()
                action = await run.waitToRetry(duration, using: plan.retryWaiter)
            case .succeed:
                // The machine succeeds a run only after an attempt made its payload.
                guard let made else {
                    action = run.step { $0.defect(RunnerDefect(description: "Convey internal error: the run's machine succeeded without a payload")) }
                    continue
                }
                return made
            case .proceed:
                // Only a step within an attempt proceeds; the attempt's end always decides.
                action = run.step { $0.defect(RunnerDefect(description: "Convey internal error: the run's machine said to proceed after an attempt")) }
            case .fail(let error, let release):
                release?.release()
                throw error
            }
        }
    }

    /// One attempt of the run, top to bottom: send through the rest of the chain → the status
    /// of a streamed error body read → `didReceiveResponse` → check the status → the delivery's
    /// part (decode, write the file, check the stream). Its end is an event for the machine,
    /// whose action comes back; `made` becomes what the run made when the attempt succeeded.
    private func attempt(_ built: BuiltAttempt, context: StepContext, next: ChainNext, made: inout Made?) async -> RunStateMachine.RunAction {
        let run = context.run
        let plan = run.plan
        await run.observers.emit(.attemptStarted, attempt: built.number)
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

            // Send: through the rest of the chain.
            try run.step { machine in machine.exchangeStarting(url: request.url) }.proceedOrThrow()
            var attemptContext = context
            attemptContext.attempt = built.number
            var exchange = try await next(TaskRunner<T>.transportRequest(request, bodyFile: built.bodyFile, plan: plan, run: run),
                                          attemptContext)
            // A body still arriving is what a stop ends from now on.
            let reading: (any CancellableWork)? = if case .stream(let source) = exchange.body { BodyReading(source: source) } else { nil }
            try run.step { machine in machine.responseReceived(reading: reading) }.proceedOrThrow()
            exchange.startedAt = startedAt
            exchange.duration = clock.duration(to: .now)
            exchange.attemptNumber = built.number
            sentRequest = exchange.request
            let throwsForStatus = plan.status.throwsError(forStatus: exchange.head.statusCode)
            if throwsForStatus, case .stream = exchange.body {
                // What the error needs of the body; the rest is never read.
                exchange.body = .data(await exchange.body.prefix(HTTPError.streamedBodyLimit))
            }
            completed = exchange
            run.completed(exchange)

            // Receive: the task's own look at the response, on the actor.
            if plan.hooks.mustCall(.didReceiveResponse) { try await TaskRunner<T>.didReceiveResponse(task, exchange: exchange) }

            // Check: the status the task's rule makes an error.
            let head = exchange.head
            if throwsForStatus {
                delivery.refused(head, holding: built.hold)
                throw HTTPError(statusCode: head.statusCode, body: exchange.data, headers: head.fields.combined,
                                url: exchange.request.url, method: exchange.request.method)
            }

            // The delivery's part: decoded, a file written and checked, a stream's type checked.
            let staged = try await delivery.stage(&exchange, holding: built.hold, plan: plan)
            action = run.step { machine in machine.payloadReady() }
            if case .succeed(let hold) = action { made = Made(exchange: exchange, staged: staged, hold: hold) }
        } catch {
            failure = error is CancellationError ? ConveyError.cancelled : error
            completed?.body.close()
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
        if !run.observers.isEmpty {
            let shown = completed.map { ServerResponse(payload: $0.data, exchange: $0) }
            await run.observers.emit(.attemptFinished(request: sentRequest, response: shown, error: action.failure ?? failure,
                                                      duration: clock.duration(to: .now)), attempt: built.number)
            if case .waitToRetry(let delay, _) = action, let failure {
                await run.observers.emit(.retryScheduled(after: failure, delay: delay), attempt: built.number)
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
            asked = .some(await TaskRunner<T>.retryInterval(task, after: error, count: count, plan: plan))
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

/// Ends a body still being read when the run stops: what the machine's receiving state owns.
private struct BodyReading: CancellableWork {
    let source: any BodySource

    func cancel() { source.cancel() }
}

extension ChainNext {
    /// No step after: for a run that never sends.
    static var none: ChainNext { Chain(steps: [], observers: []).rest }
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
    /// Plans the run, makes its chain, makes it cancellable, and builds its first attempt: the
    /// run's first visit to the actor.
    @ConveyActor
    private static func start<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, start: RunStart, chain: any ChainMaking.Type)
        async -> (ActiveRun, RunStep<T, Delivery>, BuiltAttempt) {
        ActorVisits.entered(.start, for: T.self)
        let plan = RunPlan(task: task, start: start, deliveryTimeout: delivery.totalTimeout, keepsBodyInMemory: delivery.keepsBodyInMemory,
                           bufferSize: delivery.bufferSize, readsBodyItself: delivery.readsBodyItself)
        let attempts = RunStep(task: task, delivery: delivery)
        let steps = chain.chain(for: task, plan: plan, start: start, run: attempts)
        let run = ActiveRun(plan: plan, taskType: T.self, chain: steps, observers: RunObservers(steps.observers, task: task), start: start)
        run.begin()
        let first = await build(task, delivery: delivery, plan: plan, run: run)
        attempts.begin(with: first, stepsAround: !(steps.steps.first is RunStep<T, Delivery>))
        return (run, attempts, first)
    }

    /// Builds an attempt's request: the body, the layered fields, the delivery's own fields, then
    /// `willSendRequest` (when the task has it) and the fields it returned checked.
    @ConveyActor
    static func build<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, plan: RunPlan, run: ActiveRun) async -> BuiltAttempt {
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
    static func didReceiveResponse(_ task: T, exchange: Exchange) async throws {
        ActorVisits.entered(.didReceiveResponse, for: T.self)
        guard let response = T.HookResponse.hookParameter(exchange.head) else { return }
        try await Hooks.call(.didReceiveResponse, of: T.self) { try await task.didReceiveResponse(response: response, data: exchange.data) }
    }

    /// The task's own answer; when its hook turns out to be the default, the answer of the retry
    /// policy the run read when it started, as every later run of the type gets without asking.
    @ConveyActor
    static func retryInterval(_ task: T, after error: any Error, count: Int, plan: RunPlan) -> TimeInterval? {
        ActorVisits.entered(.retryInterval, for: T.self)
        let asked = Hooks.callNow(.retryInterval, of: T.self) { task.retryInterval(afterError: error, count: count) }
        if !KnownHooks.of(T.self).mustCall(.retryInterval) {
            return plan.retryPolicy?.retryInterval(afterError: error, count: count, method: plan.method)
        }
        return asked
    }

    @ConveyActor
    static func refreshCredentials(_ server: ConveyServer, after unauthorized: HTTPError, sentGeneration: Int) async -> Bool {
        ActorVisits.entered(.refreshCredentials, for: T.self)
        return await server.credentialRefresh.refresh(for: server, after: unauthorized, sentGeneration: sentGeneration)
    }

    /// The success hooks, in their order, in one visit to the actor: the task's (when it has
    /// them) and the server's. Without any of the task's, the server's is called from here, which
    /// visits the actor only when a subclass overrides it.
    private static func finish<Delivery: ResponseDelivery>(_ task: T, delivery: Delivery, plan: RunPlan,
                                                           response: ServerResponse<Delivery.Output>) async {
        let callsDidFinish = delivery.callsDidFinish && plan.hooks.mustCall(.didFinish)
        if callsDidFinish || plan.hooks.mustCall(.didSucceed) {
            await succeeded(task, delivery: delivery, plan: plan, response: response, callsDidFinish: callsDidFinish)
        } else if plan.callsServerDidFinish {
            await plan.server.didFinish(task: task, response: ServerResponse(payload: response.data, exchange: response.exchange), error: nil)
        }
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

    /// The failure hooks, in their order, in one visit to the actor when the task has its own
    /// `didFail`; else the server's alone, which visits the actor only when a subclass overrides it.
    private static func finish(_ task: T, plan: RunPlan, failure: any Error, lastExchange: Exchange?) async {
        let response = lastExchange.map { ServerResponse(payload: $0.data, exchange: $0) }
        if plan.hooks.mustCall(.didFail) {
            await failed(task, plan: plan, failure: failure, response: response)
        } else if plan.callsServerDidFinish {
            await plan.server.didFinish(task: task, response: response, error: failure)
        }
    }

    @ConveyActor
    private static func failed(_ task: T, plan: RunPlan, failure: any Error, response: ServerResponse<Data>?) async {
        ActorVisits.entered(.failed, for: T.self)
        await Hooks.call(.didFail, of: T.self) { await task.didFail(with: failure) }
        if plan.callsServerDidFinish { await plan.server.didFinish(task: task, response: response, error: failure) }
    }
}
