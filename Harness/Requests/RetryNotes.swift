import Foundation

/// Says each `--retry` wait ("HTTP 503 Service Unavailable: retry 1 of 2 in 1.00 s") after the
/// echo of the attempt it follows.
///
/// Convey asks a task for its retry interval before it echoes the attempt that failed, so a note
/// said from `retryInterval(afterError:count:)` would come before that attempt's echo. When the
/// run's echo prints to the console, a note waits for the next echo block (the failed attempt's);
/// the next attempt's start and the end of the run say any note still waiting. Without console
/// echo a note is said at once.
final class RetryNotes: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var waiting: [String] = []
    private let followsEcho: Bool
    private let say: @Sendable (String) -> Void

    /// Notes said with `say`; `followsEcho` when the run's echo prints to the console.
    init(followsEcho: Bool, say: @escaping @Sendable (String) -> Void) {
        self.followsEcho = followsEcho
        self.say = say
    }

    /// Notes that are never said: for runs that never retry.
    static var unsaid: RetryNotes { RetryNotes(followsEcho: false) { _ in } }

    /// The note of a retry after the attempt that just failed.
    func note(_ text: String) {
        guard followsEcho else { return say(text) }
        lock.withLock { waiting.append(text) }
    }

    /// Says the notes waiting: after an echo block, before the next attempt, at the end of the run.
    func sayWaiting() {
        let notes = lock.withLock {
            defer { waiting.removeAll() }
            return waiting
        }
        for note in notes { say(note) }
    }

    /// An echo sink that writes each block with `write`, then the notes that waited for it.
    func echoSink(writing write: @escaping @Sendable (String) -> Void) -> @Sendable (String) -> Void {
        { [self] text in
            write(text)
            sayWaiting()
        }
    }
}
