import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a task: the one place a request's path lives, top to bottom.
///
/// Each attempt: build → `willSendRequest` → send into the delivery's sink, following redirects
/// (`RedirectStage`, each hop through the cache for ordinary tasks) → `didReceiveResponse`
/// → validate the status (the run's one `StatusCheck`) → the delivery's payload (decode, finish a
/// file, check and hand over a stream) → echo. After a failed attempt: one credential refresh
/// and retry after a 401, or `retryInterval(afterError:count:)` and a cancellable wait, or the
/// end. Then, for every delivery alike, `didFinish(with:)` when the delivery carries the task's
/// own payload and `didSucceed(with:)`, or `didFail(with:)`; last the server's
/// `didFinish(task:response:error:)`, exactly once per run (the hook contract in
/// Docs/defining-tasks.md).
///
/// The runner is a loop of event → action: the run's `RunStateMachine` (inside its `ActiveRun`)
/// takes every event — an attempt's end, a refresh's, a wait's, a stop — and returns the next
/// action (attempt, refresh, wait, succeed, fail), which the runner carries out. The machine's
/// states own the exchange and the retry wait, which `ActiveRun` launches through it, so a stop
/// cancels exactly what the run waits on. The run has one deadline (`RunDeadline`), which a stream
/// that asked for a total timeout carries past the run, over its body.
@ConveyActor
struct TaskRunner<T: DownloadingTask> {
    let task: T

    /// The outcome of one attempt, with whatever of the exchange completed.
    private struct Attempt<Output: Sendable> {
        let number: Int
        var request: OutgoingRequest?
        var exchange: ServerResponse<Data>?
        var elapsed: Duration = .zero
        var result: Result<ServerResponse<Output>, any Error>
    }

    /// Runs the task with its body in memory, decoded into its payload.
    func run() async throws -> ServerResponse<T.DownloadPayload> {
        try await run(MemoryDelivery(task: task))
    }

    /// Runs the task in the caller's own task, as one `ActiveRun`. Cancellation by tag or type and
    /// the total timeout stop what the run waits on, never the caller's task; the caller's task
    /// being cancelled reaches the run's machine through the one cancellation handler here.
    func run<Delivery: ResponseDelivery>(_ delivery: Delivery) async throws -> ServerResponse<Delivery.Output> {
        let server = task.server
        let totalTimeout = (delivery.totalTimeout ?? task.configuration?.totalTimeout ?? server.configuration.defaultTotalTimeout)?.clampedTimeout
        let run = ActiveRun(tag: task.sessionTag, taskType: T.self, totalTimeout: totalTimeout, clock: server.configuration.runClock)
        run.begin()
        defer { run.end() }
        return try await withTaskCancellationHandler {
            try await drive(delivery, server: server, run: run)
        } onCancel: {
            Task { @ConveyActor in run.cancel() }
        }
    }

    /// The run's loop: carry out the machine's action, hand what came of it to the machine as the
    /// next event, until the action ends the run. The first action is always an attempt.
    private func drive<Delivery: ResponseDelivery>(
        _ delivery: Delivery, server: ConveyServer, run: ActiveRun
    ) async throws -> ServerResponse<Delivery.Output> {
        let retryInterval = { (error: any Error, count: Int) in task.retryInterval(afterError: error, count: count) }
        var action = RunStateMachine.RunAction.startAttempt
        var attempt = Attempt<Delivery.Output>(number: 0, result: .failure(ConveyError.cancelled))
        var credentialGeneration = server.credentialRefresh.generation
        while true {
            switch action {
            case .startAttempt:
                credentialGeneration = server.credentialRefresh.generation
                attempt = await perform(delivery, server: server, run: run)
                switch attempt.result {
                case .success:
                    action = run.step { machine, _ in machine.payloadReady() }
                    // Stopped with the payload in hand: a stream's transfer must not outlive the run.
                    if case .fail = action { delivery.abandon() }
                case .failure(let error):
                    action = run.step { $0.attemptFailed(error, at: $1, retryInterval: retryInterval) }
                }
                echo(attempt, error: action.failure ?? attempt.result.failure, server: server)
            case .refreshCredentials(let unauthorized):
                let refreshed = await server.credentialRefresh.refresh(for: server, after: unauthorized, sentGeneration: credentialGeneration)
                action = run.step { $0.credentialRefreshEnded(refreshed: refreshed, at: $1, retryInterval: retryInterval) }
            case .waitToRetry(let duration):
                await run.waitToRetry(duration, using: server.configuration.retryWaiter)
                action = run.step { $0.retryWaitEnded(at: $1) }
            case .succeed:
                // The machine succeeds a run only after a successful attempt.
                guard case .success(let response) = attempt.result else {
                    action = .fail(attempt.result.failure ?? ConveyError.cancelled)
                    continue
                }
                await delivery.callDidFinish(response)
                await task.didSucceed(with: response.replacingPayload(response.data))
                await server.didFinish(task: task, response: attempt.exchange, error: nil)
                return response
            case .fail(let error):
                await task.didFail(with: error)
                await server.didFinish(task: task, response: attempt.exchange, error: error)
                throw error
            }
        }
    }

    private func echo<Output>(_ attempt: Attempt<Output>, error: (any Error)?, server: ConveyServer) {
        Echo.attempt(of: task, server: server, request: attempt.request, exchange: attempt.exchange,
                     error: error, attemptNumber: attempt.number, duration: attempt.elapsed)
    }

    private func perform<Delivery: ResponseDelivery>(
        _ delivery: Delivery, server: ConveyServer, run: ActiveRun
    ) async -> Attempt<Delivery.Output> {
        let attemptNumber = run.attemptNumber
        var attempt = Attempt<Delivery.Output>(number: attemptNumber, result: .failure(ConveyError.cancelled))
        var stagedFile: URL?
        let status = StatusCheck(task: task)
        let clock = ContinuousClock.now
        defer { if let stagedFile { try? FileManager.default.removeItem(at: stagedFile) } }
        do {
            try run.step { machine, now in machine.attemptStarting(at: now) }.proceedOrThrow()
            if server.configuration.failsAllRequests { throw ConveyError.requestsDisabledForDebugging }
            if server.disabled { throw ConveyError.serverDisabled(server: server.name) }

            // Build.
            let body = try await task.requestBody
            var bodyFile: URL?
            if case .file(let file, let removeWhenDone) = body?.content {
                bodyFile = file
                if removeWhenDone { stagedFile = file }
            }
            var request = try await RequestBuilder.request(for: task, server: server, body: body)
            delivery.prepare(&request)
            request = try await task.willSendRequest(request: request)
            request = RequestBuilder.movingUserInfoToAuthorization(request)
            try FieldValidation.check(request, source: .willSendRequest)
            attempt.request = request

            // Send, into the delivery's sink, in a task of its own that a stop cancels.
            let startedAt = Date()
            let sendClock = ContinuousClock.now
            let timeout = RequestBuilder.timeout(for: task, server: server)
            let networkAccess = RequestBuilder.networkAccess(for: task, server: server)
            let progress = UploadProgressRelay.transportHandler(for: task)
            let redirects = RedirectStage(task: task, server: server, attemptNumber: attemptNumber)
            let received: DeliveredExchange
            do {
                received = try await run.exchange(to: request.url) { [request, bodyFile] in
                    try await delivery.exchange(request, status: status) { sending, sink, options in
                        try await redirects.send(sending, bodyFile: bodyFile, into: sink, options: options) { hop, hopBodyFile, hopSink in
                            var exchange = TransportRequest(
                                request: hop, bodyFile: hopBodyFile, timeout: timeout,
                                allowsExpensiveNetworkAccess: networkAccess.expensive, allowsConstrainedNetworkAccess: networkAccess.constrained,
                                progress: progress)
                            exchange.maximumResponseHeadSize = server.configuration.maximumResponseHeadSize
                            exchange.expectsLargeBody = options.expectsLargeBody
                            return try await ScopedTransport.transport(for: server, task: T.self, attempt: attemptNumber).send(exchange, into: hopSink)
                        }
                    }
                }
            } catch {
                throw TransportErrors.map(error, url: request.url, timeout: timeout)
            }
            try run.step { machine, _ in machine.responseReceived() }.proceedOrThrow()
            attempt.request = received.request
            var exchange = ServerResponse(payload: received.data, data: received.data, request: received.request, head: received.head,
                                          startedAt: startedAt, duration: sendClock.duration(to: .now), attemptNumber: attemptNumber)
            exchange.cacheStatus = received.cacheStatus
            exchange.metrics = received.metrics
            attempt.exchange = exchange

            // Validate.
            try await task.didReceiveResponse(response: received.head, data: received.data)
            if status.throwsError(forStatus: received.head.statusCode) {
                throw HTTPError(statusCode: received.head.statusCode, body: received.data, headers: received.head.fields.combined,
                                url: request.url, method: request.method)
            }

            // Payload: decoded off the actor, a finished file, or a stream (which keeps the run's deadline).
            let payload = try await delivery.payload(from: exchange, url: request.url, deadline: run.deadline)
            attempt.result = .success(exchange.replacingPayload(payload))
        } catch {
            delivery.abandon()
            attempt.result = .failure(error is CancellationError ? ConveyError.cancelled : error)
        }
        attempt.elapsed = clock.duration(to: .now)
        return attempt
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
