import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time and allocations of some of this process's threads, found by the name the system
/// shows for them (`/proc/self/task/*/comm`): Convey's event loops are `convey-loop-N`.
/// Linux only; elsewhere every figure is `nil`.
public enum ThreadFigures {
    /// What the named threads had used when it was read.
    public struct Snapshot {
        /// CPU time (user + system), in microseconds, summed over the threads.
        public var cpuMicroseconds: Double
        /// Calls to the C allocator by the threads, when the allocation counter is preloaded.
        public var allocations: UInt64?
        /// How many threads matched.
        public var threads: Int
    }

    /// The prefix of every Convey event loop thread's name.
    public static let eventLoopPrefix = "convey-loop-"

    /// The figures of the threads whose name starts with `prefix`; `nil` where there is no
    /// `/proc/self/task` or no thread matched.
    public static func snapshot(ofThreadsNamed prefix: String = eventLoopPrefix) -> Snapshot? {
        #if os(Linux)
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var snapshot = Snapshot(cpuMicroseconds: 0, allocations: ProcessFigures.allocations == nil ? nil : 0, threads: 0)
        for task in tasks {
            guard let tid = Int32(task), let name = read("/proc/self/task/\(task)/comm"),
                  name.hasPrefix(prefix), let cpu = cpuMicroseconds(ofTask: task) else { continue }
            snapshot.cpuMicroseconds += cpu
            snapshot.threads += 1
            if let counted = allocations(ofThread: tid) { snapshot.allocations? += counted }
        }
        return snapshot.threads > 0 ? snapshot : nil
        #else
        return nil
        #endif
    }

    #if os(Linux)
    /// The thread's CPU time: nanoseconds on the CPU from `schedstat` (its first field), else
    /// user + system clock ticks from `stat`.
    private static func cpuMicroseconds(ofTask task: String) -> Double? {
        if let schedstat = read("/proc/self/task/\(task)/schedstat"),
           let nanoseconds = schedstat.split(separator: " ").first.flatMap({ Double($0) }) {
            return nanoseconds / 1e3
        }
        // `stat`: the fields after the name (which may hold spaces) start with the state, field 3;
        // utime and stime are fields 14 and 15.
        guard let stat = read("/proc/self/task/\(task)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) * 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    /// The thread's calls to the C allocator, from the preloaded counter.
    private static func allocations(ofThread tid: Int32) -> UInt64? {
        guard let symbol = threadAllocationCounter else { return nil }
        return UInt64(unsafeBitCast(symbol, to: (@convention(c) (Int32) -> UInt64).self)(tid))
    }

    nonisolated(unsafe) private static let threadAllocationCounter = dlsym(UnsafeMutableRawPointer(bitPattern: 0),
                                                                           "convey_allocation_count_of_thread")
    #endif
}
