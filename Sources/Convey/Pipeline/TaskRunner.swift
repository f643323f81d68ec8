import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs a task: the one place a request's path lives, top to bottom.
///
/// build → `willSendRequest` → send → `didReceiveResponse` → validate status → decode →
/// echo → `didFinish`; on failure: echo → `retryInterval(afterError:count:)` → wait and try
/// again, or `didFail` and throw. The server's `didFinish(task:response:error:)` runs last, once.
@ConveyActor
struct TaskRunner<T: DownloadingTask> {
    let task: T

    /// The outcome of one attempt, with whatever of the exchange completed.
    private struct Attempt {
        var request: URLRequest?
        var exchange: ServerResponse<Data>?
        var elapsed: Duration = .zero
        var result: Result<ServerResponse<T.DownloadPayload>, any Error>
    }

    func run() async throws -> ServerResponse<T.DownloadPayload> {
        let server = task.server
        var attemptNumber = 1
        while true {
            let attempt = await perform(attemptNumber: attemptNumber, server: server)
            Echo.attempt(of: task, server: server, request: attempt.request, exchange: attempt.exchange,
                         error: attempt.result.failure, attemptNumber: attemptNumber, duration: attempt.elapsed)
            switch attempt.result {
            case .success(let response):
                await task.didFinish(with: response)
                await server.didFinish(task: task, response: attempt.exchange, error: nil)
                return response
            case .failure(let attemptError):
                var failure = attemptError
                if !failure.isCancellation, let interval = task.retryInterval(afterError: failure, count: attemptNumber) {
                    do {
                        try await Task.sleep(for: .seconds(interval.isFinite ? max(0, interval) : 0))
                        attemptNumber += 1
                        continue
                    } catch {
                        failure = ConveyError.cancelled
                    }
                }
                await task.didFail(with: failure)
                await server.didFinish(task: task, response: attempt.exchange, error: failure)
                throw failure
            }
        }
    }

    private func perform(attemptNumber: Int, server: ConveyServer) async -> Attempt {
        var attempt = Attempt(result: .failure(ConveyError.cancelled))
        var stagedFile: URL?
        let clock = ContinuousClock.now
        defer { if let stagedFile { try? FileManager.default.removeItem(at: stagedFile) } }
        defer { attempt.elapsed = clock.duration(to: .now) }
        do {
            try Task.checkCancellation()
            if DebugSwitches.failAllRequests { throw ConveyError.requestsDisabledForDebugging }
            if server.disabled { throw ConveyError.serverDisabled(server: server.name) }

            // Build.
            let body = try await task.requestBody
            var bodyFile: URL?
            if case .file(let file, let removeWhenDone) = body?.content {
                bodyFile = file
                if removeWhenDone { stagedFile = file }
            }
            var request = try await RequestBuilder.request(for: task, server: server, body: body)
            request = try await task.willSendRequest(request: request)
            attempt.request = request

            // Send.
            let startedAt = Date()
            let sendClock = ContinuousClock.now
            let timeout = RequestBuilder.timeout(for: task, server: server)
            let sent: TransportResponse
            do {
                let networkAccess = RequestBuilder.networkAccess(for: task, server: server)
                sent = try await server.transport.send(TransportRequest(
                    urlRequest: request, bodyFile: bodyFile, timeout: timeout,
                    allowsExpensiveNetworkAccess: networkAccess.expensive, allowsConstrainedNetworkAccess: networkAccess.constrained,
                    progress: UploadProgressRelay.transportHandler(for: task)))
            } catch {
                throw TransportErrors.map(error, url: request.url, timeout: timeout)
            }
            let exchange = ServerResponse(payload: sent.data, data: sent.data, request: request, httpResponse: sent.response,
                                          startedAt: startedAt, duration: sendClock.duration(to: .now), attemptNumber: attemptNumber)
            attempt.exchange = exchange

            // Validate.
            try await task.didReceiveResponse(response: sent.response, data: sent.data)
            let status = sent.response.statusCode
            if server.configuration.reportBadHTTPStatusAsError, !(200..<300).contains(status) {
                throw HTTPError(statusCode: status, body: sent.data, headers: sent.response.headerFields,
                                url: request.url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"))
            }

            // Decode, off the actor unless there is nothing to decode.
            if let payload = PayloadDecoding.passThrough(T.DownloadPayload.self, sent.data) {
                attempt.result = .success(exchange.replacingPayload(payload))
            } else {
                let payload = try await PayloadDecoding.decodeConcurrently(
                    T.DownloadPayload.self, from: sent.data, using: task.decoder, url: request.url)
                attempt.result = .success(exchange.replacingPayload(payload))
            }
        } catch {
            attempt.result = .failure(error is CancellationError ? ConveyError.cancelled : error)
        }
        return attempt
    }
}

/// Maps what a transport throws onto Convey's errors.
enum TransportErrors {
    static func map(_ error: any Error, url: URL?, timeout: Duration) -> any Error {
        if error is ConveyError || error is HTTPError { return error }
        if error is CancellationError { return ConveyError.cancelled }
        guard let urlError = error as? URLError else {
            return ConveyError.transport(TransportFailure(code: -1, reason: String(describing: error), url: url))
        }
        switch urlError.code {
        case .cancelled: return ConveyError.cancelled
        case .timedOut: return ConveyError.timedOut(TimeoutFailure(kind: .attempt, limit: timeout, url: url))
        default:
            return ConveyError.transport(TransportFailure(code: urlError.code.rawValue, reason: urlError.localizedDescription, url: url))
        }
    }
}

/// Launch-argument switches for debugging apps.
enum DebugSwitches {
    /// `-fail-all-requests`: every task fails at once with `ConveyError.requestsDisabledForDebugging`.
    static let failAllRequests = ProcessInfo.processInfo.arguments.contains("-fail-all-requests")
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension HTTPURLResponse {
    /// The header fields as strings, names as the server sent them.
    var headerFields: [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in allHeaderFields {
            fields[String(describing: name)] = String(describing: value)
        }
        return fields
    }
}
