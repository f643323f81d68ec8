import Foundation
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A stub transport that answers from a script, one step per request, repeating the last step.
final class ScriptedTransport: @unchecked Sendable {
    enum Step: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case fail(URLError.Code)
        case hang
    }

    private let lock = NSLock()
    private var steps: [Step]
    private var served = 0

    init(_ steps: [Step]) { self.steps = steps }

    var requestCount: Int { lock.withLock { served } }

    var transport: StubTransport {
        StubTransport { [self] request in
            let step = lock.withLock { () -> Step in
                served += 1
                return steps.count > 1 ? steps.removeFirst() : steps[0]
            }
            let url = request.request.url
            switch step {
            case .status(let code, let headers, let body):
                return TransportResponse(url: url, statusCode: code, headers: headers, body: Data(body.utf8))
            case .fail(let code):
                throw URLError(code)
            case .hang:
                try await Task.sleep(for: .seconds(60))
                throw URLError(.timedOut)
            }
        }
    }
}

/// A retry waiter that records each wait and returns at once: the waits a rule asked for,
/// without sleeping through them.
final class RecordingRetryWaiter: RetryWaiting, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Duration] = []

    func wait(_ duration: Duration) async throws {
        lock.withLock { recorded.append(duration) }
        try Task.checkCancellation()
    }

    /// The waits, in whole milliseconds (they arrive as seconds in a `Double`).
    var milliseconds: [Int] { lock.withLock { recorded.map { Int(($0 / .milliseconds(1)).rounded()) } } }
}

/// A retry waiter whose waits end only by cancellation: a test knows when a run is waiting, and
/// that nothing but cancelling it ends the wait.
final class HeldRetryWaiter: RetryWaiting, @unchecked Sendable {
    private let lock = NSLock()
    private var durations: [Duration] = []
    private let started: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation

    init() { (started, startedContinuation) = AsyncStream.makeStream(of: Void.self) }

    func wait(_ duration: Duration) async throws {
        lock.withLock { durations.append(duration) }
        startedContinuation.yield()
        // Suspends without a timer until the waiting task is cancelled.
        let never = AsyncStream<Void> { _ in }
        for await _ in never {}
        try Task.checkCancellation()
    }

    /// Returns once a run is waiting.
    func waitingStarted() async {
        for await _ in started { return }
    }

    /// The waits asked for.
    var requested: [Duration] { lock.withLock { durations } }
}
