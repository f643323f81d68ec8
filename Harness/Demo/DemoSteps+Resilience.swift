import Convey
import Foundation

/// Counts a task's attempts across retries; tasks are values, so the count lives here.
private final class AttemptCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var failures: Int { lock.withLock { count } }
    func fail() { lock.withLock { count += 1 } }
}

private struct RecoveringTask: DemoTask, ServerTask {
    let context: DemoContext
    let attempts = AttemptCounter()
    /// httpbin has no endpoint that fails once and then works, so the first attempt asks for a 503.
    var path: String { attempts.failures == 0 ? "status/503" : "get" }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        let retry = (error as? HTTPError)?.serverError == .serviceUnavailable && count < 3
        context.hooks.add("retryInterval", "\(DemoText.errorName(error)), count \(count) → " + (retry ? "retry in 0.2 s" : "give up"))
        guard retry else { return nil }
        attempts.fail()
        return 0.2
    }
}

private struct SlowTask: DemoTask, ServerTask {
    let context: DemoContext
    let seconds: Int
    let configuration: TaskConfiguration?
    var path: String { "delay/\(seconds)" }
}

extension DemoSteps {
    static let etagRevalidation = DemoStep(
        title: "ETag revalidation (304)",
        explanation: "A repeated GET revalidated with If-None-Match: the server answers 304 and the cached body is used."
    ) { _ in
        .notAvailableYet("Convey's cache (DataCache with its ETag store) has not landed, so a 304 cannot be answered from a cache yet.")
    }

    static let retryAfter503 = DemoStep(
        title: "Retry after 503",
        explanation: "retryInterval(afterError:count:) asks for another attempt after a 503 Service Unavailable."
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
        } catch ConveyError.timedOut(let failure) {
            let elapsed = clock.duration(to: .now)
            guard elapsed >= failure.limit * 0.8 else {
                return .misbehaved("ConveyError.timedOut after \(elapsed.text), long before the 0.3 s limit"
                                   + " (URLSession on Linux drops the fraction of a timeout: 0.3 s becomes 0)")
            }
            return .behaved("ConveyError.timedOut (\(failure.kind.rawValue) limit) after \(elapsed.text)")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let totalTimeout = DemoStep(
        title: "Total timeout",
        explanation: "TaskConfiguration(totalTimeout: 0.3 s) against a server that waits 1 s: Convey must enforce it, URLSession on Linux does not."
    ) { context in
        let clock = ContinuousClock.now
        let configuration = TaskConfiguration(timeout: .seconds(5), totalTimeout: .milliseconds(300))
        do {
            try await SlowTask(context: context, seconds: 1, configuration: configuration).send()
            return .notAvailableYet("totalTimeout is not enforced yet: the task ran \(clock.duration(to: .now).text) past its 0.3 s limit.")
        } catch ConveyError.timedOut(let failure) where failure.kind == .total {
            return .behaved("ConveyError.timedOut (total limit) after \(clock.duration(to: .now).text)")
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
            try await SlowTask(context: context, seconds: 5, configuration: nil).download()
        }
        try? await Task.sleep(for: .milliseconds(200))
        running.cancel()
        switch await running.result {
        case .success:
            return .misbehaved("the task finished although it was cancelled")
        case .failure(let error) where error.isCancellation:
            return .behaved("\(DemoText.errorName(error)) after \(clock.duration(to: .now).text); displayMessage is nil, so an app shows nothing")
        case .failure(let error):
            return .misbehaved(DemoText.error(error))
        }
    }

    static let cancelBySessionTag = DemoStep(
        title: "Cancel by session tag",
        explanation: "Tasks with a sessionTag are cancelled together by ConveySession.cancel(sessionWithTag:)."
    ) { _ in
        .notAvailableYet("ConveySession.cancel(sessionWithTag:) and the task property sessionTag have not landed.")
    }
}
