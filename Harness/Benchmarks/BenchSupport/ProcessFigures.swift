import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The benchmark process's own CPU time, context switches and memory, shared by every benchmark executable.
public enum ProcessFigures {
    #if canImport(Glibc)
    private static let ownUsage = __rusage_who_t(RUSAGE_SELF.rawValue)
    #else
    private static let ownUsage = RUSAGE_SELF
    #endif

    /// User + system CPU time of the whole process, in microseconds.
    public static var cpuMicroseconds: Double {
        var usage = rusage()
        getrusage(ownUsage, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
    }

    /// Context switches of the whole process so far, voluntary (it waited) + involuntary (it was
    /// preempted), summed over all its threads.
    public static var contextSwitches: Int {
        var usage = rusage()
        getrusage(ownUsage, &usage)
        return usage.ru_nvcsw + usage.ru_nivcsw
    }

    /// Calls to the C allocator so far, when the process runs with the allocation counter
    /// preloaded (scripts/build-allocation-counter, which scripts/bench preloads); `nil` otherwise.
    public static var allocations: UInt64? {
        #if os(Linux)
        guard let symbol = allocationCounter else { return nil }
        return UInt64(unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)())
        #else
        return nil
        #endif
    }

    #if os(Linux)
    nonisolated(unsafe) private static let allocationCounter = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "convey_allocation_count")
    #endif

    /// Peak resident memory so far, in MiB.
    public static var peakResidentMB: Double {
        var usage = rusage()
        getrusage(ownUsage, &usage)
        return Double(usage.ru_maxrss) * maxRSSUnitBytes / 1_048_576
    }

    /// The unit of `ru_maxrss`: kibibytes on Linux, bytes on Darwin (getrusage(2) on each).
    #if canImport(Darwin)
    private static let maxRSSUnitBytes: Double = 1
    #else
    private static let maxRSSUnitBytes: Double = 1024
    #endif

    /// Resident memory now, in MiB (Linux: /proc/self/statm; elsewhere the peak so far).
    public static var residentMB: Double {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) else { return peakResidentMB }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
        #else
        return peakResidentMB
        #endif
    }

    /// A line of /proc/self/status (`VmRSS`, `VmHWM`), in MiB; 0 where there is none (every system but Linux).
    public static func statusMiB(_ field: String) -> Double {
        #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kilobytes = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
        #else
        return 0
        #endif
    }

    /// Resets VmHWM to the current resident set, so that it records the peak from now on.
    /// Returns whether the kernel allowed it (never outside Linux).
    @discardableResult
    public static func resetPeak() -> Bool {
        #if os(Linux)
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
        #else
        return false
        #endif
    }
}
