@_spi(Tools) import Convey
import Foundation

/// Counts a task's attempts across retries; tasks are values, so the count lives here.
private final class AttemptCounter: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var count = 0

    var failures: Int { lock.withLock { count } }
    func fail() { lock.withLock { count += 1 } }
}

private struct RecoveringTask: DemoTask, ServerTask {
    let context: DemoContext
    let attempts = AttemptCounter()
    var path: String { "status/503" }

    /// httpbin has no endpoint that fails once and then works, so the attempts after a failure go
    /// to `get` instead: a run reads its path once, and each attempt's request passes through here.
    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        var sent = request
        if attempts.failures > 0 { sent.url = request.url.deletingLastPathComponent().deletingLastPathComponent().appending(path: "get") }
        context.hooks.add("willSendRequest", "\(sent.method) \(server.configuration.redaction.maskedURL(sent.url))")
        return sent
    }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        let retry = (error as? HTTPError)?.serverError == .serviceUnavailable && count < 3
        context.hooks.add("retryInterval", "\(DemoText.errorName(error)), count \(count) → " + (retry ? "retry in 0.2 s" : "give up"))
        guard retry else { return nil }
        attempts.fail()
        return 0.2
    }
}

private struct ETagTask: DemoTask, ServerTask {
    let context: DemoContext
    var path: String { "etag/demo-v1" }
}

private struct SlowTask: DemoTask, ServerTask {
    let context: DemoContext
    let seconds: Double
    var configuration: TaskConfiguration? = nil
    var sessionTag: String? = nil
    var path: String { "delay/" + (seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) }
}

extension DemoSteps {
    static let etagRevalidation = DemoStep(
        title: "ETag revalidation (304)",
        explanation: "A repeated GET revalidated with If-None-Match: the server answers 304 and the cached body is used."
    ) { context in
        let server = context.server
        let previous = server.configuration.cache
        server.configuration.cache = DataCache()
        defer { server.configuration.cache = previous }
        do {
            let first = try await ETagTask(context: context).download()
            let second = try await ETagTask(context: context).download()
            guard first.cacheStatus == .network, second.cacheStatus == .revalidated, second.data == first.data else {
                return .misbehaved("first \(first.cacheStatus.rawValue), then \(second.cacheStatus.rawValue)")
            }
            var tag = "?"
            if case let url = first.request.url, let stored = await server.configuration.cache?.eTag(for: url) { tag = stored }
            return .behaved("first from the network (ETag \(tag)), then 304 Not Modified answered with the stored \(DisplayFormat.byteCount(second.data.count))")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let retryAfter503 = DemoStep(
        title: "Retry after 503",
        explanation: "The task's retryInterval(afterError:count:) asks for another attempt after a 503 Service Unavailable"
            + " (a RetryPolicy answers the same hook with backoff)."
    ) { context in
        do {
            let response = try await RecoveringTask(context: context).download()
            return response.attemptNumber == 2
                ? .behaved("succeeded on attempt 2, 0.2 s after the 503")
                : .misbehaved("succeeded on attempt \(response.attemptNumber)")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let attemptTimeout = DemoStep(
        title: "Attempt timeout",
        explanation: "TaskConfiguration(timeout: 0.3 s) against a server that waits 2 s before answering."
    ) { context in
        let clock = ContinuousClock.now
        do {
            try await SlowTask(context: context, seconds: 2, configuration: TaskConfiguration(timeout: .milliseconds(300))).send()
            return .misbehaved("the task finished instead of timing out")
        } catch ConveyError.attemptTimedOut(let limit, _) {
            let elapsed = clock.duration(to: .now)
            guard elapsed >= limit * 0.8 else {
                return .misbehaved("ConveyError.attemptTimedOut after \(DisplayFormat.duration(elapsed)), long before the 0.3 s limit"
                                   + " (URLSession on Linux drops the fraction of a timeout: 0.3 s becomes 0)")
            }
            return .behaved("ConveyError.attemptTimedOut after \(DisplayFormat.duration(elapsed))")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let totalTimeout = DemoStep(
        title: "Total timeout",
        explanation: "TaskConfiguration(totalTimeout: 0.3 s) against a server that waits 1 s: Convey enforces it itself, since URLSession on Linux ignores its resource timeout."
    ) { context in
        let clock = ContinuousClock.now
        let configuration = TaskConfiguration(timeout: .seconds(5), totalTimeout: .milliseconds(300))
        do {
            try await SlowTask(context: context, seconds: 1, configuration: configuration).send()
            return .misbehaved("the task ran \(DisplayFormat.duration(clock.duration(to: .now))), past its 0.3 s total limit")
        } catch ConveyError.totalTimedOut {
            return .behaved("ConveyError.totalTimedOut after \(DisplayFormat.duration(clock.duration(to: .now)))")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let cancellation = DemoStep(
        title: "Cancellation",
        explanation: "The Swift task running a download is cancelled after 0.2 s; the transfer stops and nothing is shown to the user."
    ) { context in
        let clock = ContinuousClock.now
        let running = Task { @ConveyActor in
            try await SlowTask(context: context, seconds: 5).download()
        }
        try? await Task.sleep(for: .milliseconds(200))
        running.cancel()
        switch await running.result {
        case .success:
            return .misbehaved("the task finished although it was cancelled")
        case .failure(let error) where error.isCancellation:
            return .behaved("\(DemoText.errorName(error)) after \(DisplayFormat.duration(clock.duration(to: .now))); displayMessage is nil, so an app shows nothing")
        case .failure(let error):
            return .misbehaved(DemoText.error(error))
        }
    }

    static let cancelBySessionTag = DemoStep(
        title: "Cancel by session tag",
        explanation: "Two slow runs tagged \"demo-search\" and one untagged run; ConveySession.cancel(sessionWithTag:) ends the tagged ones only."
    ) { context in
        let tagged = (0..<2).map { _ in
            Task { @ConveyActor in try await SlowTask(context: context, seconds: 5, sessionTag: "demo-search").download() }
        }
        let untagged = Task { @ConveyActor in try await SlowTask(context: context, seconds: 0.5).download() }
        try? await Task.sleep(for: .milliseconds(200))
        let cancelled = ConveySession.cancel(sessionWithTag: "demo-search")
        var taggedEnds: [Bool] = []
        for run in tagged { taggedEnds.append(await run.result.failure?.isCancellation == true) }
        let untaggedResult = await untagged.result
        guard cancelled == 2, taggedEnds == [true, true], case .success = untaggedResult else {
            return .misbehaved("cancel(sessionWithTag:) returned \(cancelled); tagged runs cancelled: \(taggedEnds);"
                               + " untagged run: \(untaggedResult.failure.map(DemoText.error) ?? "succeeded")")
        }
        return .behaved("cancel(sessionWithTag:) cancelled 2 runs; both ended with ConveyError.cancelled, the untagged run finished")
    }
}

extension Result {
    /// The error, or `nil` on success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
