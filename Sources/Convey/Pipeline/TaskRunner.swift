import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a task: the one place a request's path lives, top to bottom.
///
/// Each attempt: build → `willSendRequest` → send into the delivery's sink → `didReceiveResponse`
/// → validate the status → the delivery's payload (decode, finish a file, hand over a stream) →
/// echo. After a failed attempt: one credential refresh and retry after a 401, or
/// `retryInterval(afterError:count:)` and a cancellable wait, or the end. Then `didFinish` or
/// `didFail`, and last the server's `didFinish(task:response:error:)`, exactly once per run.
@ConveyActor
struct TaskRunner<T: DownloadingTask> {
    let task: T

    /// The outcome of one attempt, with whatever of the exchange completed.
    private struct Attempt<Output: Sendable> {
        var request: URLRequest?
        var exchange: ServerResponse<Data>?
        var elapsed: Duration = .zero
        var result: Result<ServerResponse<Output>, any Error>
    }

    /// Runs the task with its body in memory, decoded into its payload.
    func run() async throws -> ServerResponse<T.DownloadPayload> {
        try await run(MemoryDelivery(task: task))
    }

    /// Runs the task as a `ConveySession`, in the caller's own task: cancellation by tag or type
    /// and the total timeout stop what the run waits on through `session.cancellation`, so the
    /// caller's task is never cancelled by them and no task is spawned per run.
    func run<Delivery: ResponseDelivery>(_ delivery: Delivery) async throws -> ServerResponse<Delivery.Output> {
        let server = task.server
        let totalTimeout = (task.configuration?.totalTimeout ?? server.configuration.defaultTotalTimeout)?.clampedTimeout
        let session = ConveySession(tag: task.sessionTag, taskType: T.self, totalTimeout: totalTimeout)
        session.begin()
        defer { session.end() }
        return try await runAttempts(delivery, server: server, session: session)
    }

    private func runAttempts<Delivery: ResponseDelivery>(
        _ delivery: Delivery, server: ConveyServer, session: ConveySession
    ) async throws -> ServerResponse<Delivery.Output> {
        var attemptNumber = 1
        var refreshedCredentials = false
        while true {
            let credentialGeneration = server.credentialRefresh.generation
            var attempt = await perform(delivery, attemptNumber: attemptNumber, server: server, session: session)
            if case .failure(let error) = attempt.result {
                attempt.result = .failure(session.explain(error, url: attempt.request?.url))
            }
            Echo.attempt(of: task, server: server, request: attempt.request, exchange: attempt.exchange,
                         error: attempt.result.failure, attemptNumber: attemptNumber, duration: attempt.elapsed)
            switch attempt.result {
            case .success(let response):
                if let typed = response as? ServerResponse<T.DownloadPayload> { await task.didFinish(with: typed) }
                await server.didFinish(task: task, response: attempt.exchange, error: nil)
                return response
            case .failure(let attemptError):
                var failure = attemptError
                if !refreshedCredentials, let unauthorized = failure as? HTTPError, unauthorized.isUnauthorized,
                   await server.credentialRefresh.refresh(for: server, after: unauthorized, sentGeneration: credentialGeneration) {
                    refreshedCredentials = true
                    attemptNumber += 1
                    continue
                }
                if !failure.isCancellation, !session.deadlineExpired,
                   let interval = task.retryInterval(afterError: failure, count: attemptNumber),
                   session.hasTime(forWaiting: interval) {
                    do {
                        try await session.sleep(for: interval.isFinite ? max(0, interval) : 0, using: server.configuration.retryWaiter)
                        attemptNumber += 1
                        continue
                    } catch {
                        failure = session.explain(ConveyError.cancelled, url: attempt.request?.url)
                    }
                }
                await task.didFail(with: failure)
                await server.didFinish(task: task, response: attempt.exchange, error: failure)
                throw failure
            }
        }
    }

    private func perform<Delivery: ResponseDelivery>(
        _ delivery: Delivery, attemptNumber: Int, server: ConveyServer, session: ConveySession
    ) async -> Attempt<Delivery.Output> {
        var attempt = Attempt<Delivery.Output>(result: .failure(ConveyError.cancelled))
        var stagedFile: URL?
        let clock = ContinuousClock.now
        defer { if let stagedFile { try? FileManager.default.removeItem(at: stagedFile) } }
        do {
            try session.checkCancellation()
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
            try FieldValidation.check(request, source: .willSendRequest)
            attempt.request = request

            // Send, into the delivery's sink.
            let startedAt = Date()
            let sendClock = ContinuousClock.now
            let timeout = RequestBuilder.timeout(for: task, server: server)
            let networkAccess = RequestBuilder.networkAccess(for: task, server: server)
            let progress = UploadProgressRelay.transportHandler(for: task)
            let received: DeliveredExchange
            do {
                received = try await delivery.exchange(request, cancellation: session.cancellation) { sending, sink, options in
                    var exchange = TransportRequest(
                        urlRequest: sending, bodyFile: bodyFile, timeout: timeout,
                        allowsExpensiveNetworkAccess: networkAccess.expensive, allowsConstrainedNetworkAccess: networkAccess.constrained,
                        progress: progress, cancellation: options.cancellation)
                    exchange.maximumResponseHeadSize = server.configuration.maximumResponseHeadSize
                    exchange.followsRedirects = options.followsRedirects && task.followsRedirects
                    exchange.expectsLargeBody = options.expectsLargeBody
                    return try await server.transport.send(exchange, into: sink)
                }
            } catch {
                throw TransportErrors.map(error, url: request.url, timeout: timeout)
            }
            try session.checkCancellation()
            attempt.request = received.request
            var exchange = ServerResponse(payload: received.data, data: received.data, request: received.request, head: received.head,
                                          startedAt: startedAt, duration: sendClock.duration(to: .now), attemptNumber: attemptNumber)
            exchange.cacheStatus = received.cacheStatus
            exchange.metrics = received.metrics
            attempt.exchange = exchange

            // Validate.
            try await ResponseHook.call(task, head: received.head, data: received.data)
            try session.checkCancellation()
            let status = received.head.statusCode
            if StatusRule.throwsError(forStatus: status, rule: task.statusRule, followsRedirects: task.followsRedirects) {
                throw HTTPError(statusCode: status, body: received.data, headers: received.head.fields.combined,
                                url: request.url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"))
            }

            // Payload: decoded off the actor, a finished file, or a stream.
            let payload = try await delivery.payload(from: exchange, url: request.url)
            try session.checkCancellation()
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
