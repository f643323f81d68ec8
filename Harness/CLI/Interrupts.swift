import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns Ctrl-C into cancellation: the first SIGINT cancels the running command, which then
/// cancels its transfers and exits with 130; a second one exits at once.
///
/// A process-wide SIGINT handler, installed first thing, writes a byte to a pipe, and a thread of
/// its own reads it: whichever thread the kernel interrupts, the interrupt arrives, and one that
/// comes before the command exists waits for it. (A dispatch signal source on Linux loses an
/// interrupt delivered to a thread that does not watch for it, which a busy machine hits.)
enum Interrupts {
    /// The pipe's write end, for the signal handler; set before the handler is installed.
    nonisolated(unsafe) private static var pipeWriteEnd: Int32 = -1
    private static let command = InterruptedCommand()

    /// Starts taking interrupts. Call it first thing; without a pipe Ctrl-C keeps its default
    /// action (the process ends at once).
    static func install() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        pipeWriteEnd = ends[1]
        let readEnd = ends[0]
        let reader = Thread { [command] in
            var byte: UInt8 = 0
            while true {
                let count = read(readEnd, &byte, 1)
                if count == 1 { command.interrupt() } else if count < 0, errno == EINTR { continue } else { return }
            }
        }
        reader.name = "convey-harness.interrupts"
        reader.start()
        signal(SIGINT) { _ in
            var byte: UInt8 = 1
            _ = write(Interrupts.pipeWriteEnd, &byte, 1)
        }
    }

    /// The command the first interrupt cancels (at once, if one already came).
    static func cancel(_ task: Task<ExitCode, Never>) {
        command.set(task)
    }
}

/// The running command and the interrupts so far.
private final class InterruptedCommand: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var task: Task<ExitCode, Never>?
    private var interrupts = 0

    func set(_ task: Task<ExitCode, Never>) {
        let interrupted = lock.withLock {
            self.task = task
            return interrupts > 0
        }
        if interrupted { task.cancel() }
    }

    func interrupt() {
        let (count, task) = lock.withLock {
            interrupts += 1
            return (interrupts, self.task)
        }
        if count > 1 { exit(ExitCode.interrupted.rawValue) }
        task?.cancel()
    }
}
