import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns Ctrl-C into cancellation: the first SIGINT cancels the running command, which then
/// cancels its transfers and exits with 130; a second one exits at once.
enum Interrupts {
    /// Starts watching for SIGINT; keep the returned source alive while `task` runs.
    static func cancelling(_ task: Task<ExitCode, Never>) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "convey-harness.interrupts"))
        let count = InterruptCount()
        source.setEventHandler {
            if count.increment() > 1 { exit(ExitCode.interrupted.rawValue) }
            task.cancel()
        }
        source.resume()
        return source
    }
}

/// How many interrupts arrived; touched only on the signal source's serial queue.
private final class InterruptCount: @unchecked Sendable {
    private var value = 0

    func increment() -> Int {
        value += 1
        return value
    }
}
