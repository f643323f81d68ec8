// The C library alone, imported `@preconcurrency`: through Foundation, Swift 6 refuses `stdout`
// as shared mutable state, which the C library guards itself.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// Where console echo goes unless `ServerConfiguration.echoSink` says otherwise: standard output,
/// in one ordered stream with the app's own `print`.
///
/// `print` writes into the C library's `stdout` buffer, which a terminal gets line by line but a
/// pipe or a file only when it fills or the process exits. So each block first flushes `stdout`,
/// sending what the app printed before it, then goes out whole with `write(2)`, before anything
/// printed after it. Measured on Linux piped into a file, echo written straight past the buffer
/// came out ahead of every line the app had printed; flushed first, each line where it happened.
/// Darwin's `stdout` buffers the same way. Writing echo into the buffer instead would order it
/// as well, but a crash would then lose the echo that explains it, and the app's own unbuffered
/// writes would pass it.
@usableFromInline
enum StandardOutputEcho {
    /// Writes one echo block to standard output, whole, after what the app printed before it.
    @usableFromInline
    static func write(_ text: String) {
        fflush(stdout)
        let bytes = Array((text + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            guard let start = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = writeToStandardOutput(start + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    // Standard output is closed or full for good: echo is lost, the app goes on.
                    return
                }
            }
        }
    }

    private static func writeToStandardOutput(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(STDOUT_FILENO, bytes, count)
        #elseif canImport(Musl)
        Musl.write(STDOUT_FILENO, bytes, count)
        #else
        Darwin.write(STDOUT_FILENO, bytes, count)
        #endif
    }
}
