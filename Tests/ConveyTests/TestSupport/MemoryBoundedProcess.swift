#if os(Linux)
import Foundation
import Testing

/// How a memory-bounded child process ended.
struct BoundedRun: Sendable {
    /// The exit status, or the signal number when `exited` is `false`.
    let status: Int32
    let exited: Bool
    /// Whether the watcher killed it for passing the memory bound.
    let killedForMemory: Bool
    /// The largest resident set it had while watched (its high-water mark), in bytes.
    let peakResidentBytes: Int
}

/// Runs a child process while watching its resident memory in `/proc`, and kills it the moment
/// it passes a bound: a case that could exhaust memory fails one test instead of the machine.
enum MemoryBoundedProcess {
    static func run(_ executable: URL, _ arguments: [String], memoryLimit: Int, timeout: Duration = .seconds(60),
                    environment: [String: String] = [:]) async throws -> BoundedRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        // Watched from a thread of its own, not the test pool's: on a busy machine a pool task's
        // 10 ms sleep can last seconds, long enough for a child to pass the bound and exit unseen.
        // The high-water mark (`VmHWM`) keeps a peak that fell between two looks.
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let started = ContinuousClock.now
                var peak = 0
                var killedForMemory = false
                var killed = false
                while process.isRunning {
                    peak = max(peak, residentBytes(of: pid, field: "VmHWM:"))
                    if !killed, peak > memoryLimit || started.duration(to: .now) > timeout {
                        killedForMemory = peak > memoryLimit
                        killed = true
                        kill(pid, SIGKILL)
                    }
                    usleep(2_000)
                }
                process.waitUntilExit()
                continuation.resume(returning: BoundedRun(status: process.terminationStatus, exited: process.terminationReason == .exit,
                                                          killedForMemory: killedForMemory, peakResidentBytes: peak))
            }
        }
    }

    /// `field` (`VmRSS:` now, `VmHWM:` the most so far) of a running process, 0 once it is gone.
    static func residentBytes(of pid: Int32, field: String = "VmRSS:") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
              let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }
}
#endif
