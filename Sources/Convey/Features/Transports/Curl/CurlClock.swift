#if os(Linux) && canImport(CConveyCurlShim)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The monotonic clock in nanoseconds: cheap enough to read in every curl callback.
enum CurlClock {
    static var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, at least 1, saturating instead of overflowing.
    var curlNanoseconds: UInt64 {
        let parts = components
        guard parts.seconds >= 0 else { return 1 }
        guard parts.seconds < 1_000_000_000 else { return UInt64(1_000_000_000) * 1_000_000_000 }
        return max(1, UInt64(parts.seconds) * 1_000_000_000 + UInt64(parts.attoseconds / 1_000_000_000))
    }

    /// The duration in whole milliseconds for curl's `_MS` options: at least 1, at most `Int32.max`.
    var curlMilliseconds: Int {
        Int(min(max(curlNanoseconds / 1_000_000, 1), UInt64(Int32.max)))
    }
}
#endif
