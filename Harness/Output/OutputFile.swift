import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a body held in memory to the file `-o` names, as curl would have: appended after `-C`,
/// else replacing what is there. A new file is owner-only; a link is never followed, but to a
/// device (`/dev/null`, `/dev/stdout`), which is written through.
enum OutputFile {
    /// Whether `file` is written through rather than replaced: it is, or links to, a device, a
    /// FIFO or a socket, or it lives under `/dev` or (on Linux) `/proc` (`/dev/stdout` links to a
    /// file when standard output is one). A download must never put a file in its place.
    static func writesThrough(_ file: URL) -> Bool {
        let path = file.standardizedFileURL.path(percentEncoded: false)
        if path.hasPrefix("/dev/") { return true }
        #if os(Linux)
        if path.hasPrefix("/proc/") { return true }
        #endif
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type == S_IFCHR || type == S_IFBLK || type == S_IFIFO || type == S_IFSOCK
    }

    /// Writes into what `file` names, through its links, as a shell's `>` does.
    static func writeThrough(_ data: Data, to file: URL) throws(LocalFailure) {
        try write(data, to: file, flags: O_WRONLY | O_TRUNC | O_CLOEXEC)
    }

    /// Writes to `file` itself: appended, or replacing its contents; created owner-only when missing.
    static func write(_ data: Data, to file: URL, appending: Bool) throws(LocalFailure) {
        try write(data, to: file, flags: O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC))
    }

    private static func write(_ data: Data, to file: URL, flags: Int32) throws(LocalFailure) {
        let path = file.path(percentEncoded: false)
        let descriptor = open(path, flags, 0o600)
        guard descriptor >= 0 else {
            throw LocalFailure(message: "-o: cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.close()
        } catch {
            throw LocalFailure(message: "-o: cannot write \(path): \(error.localizedDescription)")
        }
    }
}
