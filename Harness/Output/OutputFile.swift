import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a body held in memory to the file `-o` names, as curl would have: appended after `-C`,
/// else replacing what is there. A new file is owner-only; a link is never followed.
enum OutputFile {
    static func write(_ data: Data, to file: URL, appending: Bool) throws(LocalFailure) {
        let path = file.path(percentEncoded: false)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC), 0o600)
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
