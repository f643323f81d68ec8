import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Ownership of an outbox folder: an exclusive `flock(2)` on its `.lock` file, held while a
/// process delivers or changes items, so two processes (or two outboxes in one process) never
/// send the same item at once. The kernel drops the lock when its holder exits, however it
/// exits, so a killed owner never leaves the folder locked. The holder writes its process ID in
/// the file, for the message others get.
final class FolderLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// The lock file of the folder at `folderPath`.
    static func path(in folderPath: String) -> String { folderPath + "/.lock" }

    /// What taking the lock without waiting came to.
    enum Attempt: Sendable {
        /// The lock, held until it is released.
        case acquired(FolderLock)
        /// Another holder has it.
        case heldElsewhere
        /// The lock file's data is protected and unavailable for now (a locked device,
        /// `ProtectedData`): not an error, a wait.
        case protectedDataUnavailable
    }

    /// Takes the lock without waiting.
    static func tryAcquire(in folderPath: String) throws(ConveyError) -> Attempt {
        let path = path(in: folderPath)
        let file: OwnerOnlyFiles.OpenedFile
        do {
            file = try OwnerOnlyFiles.openOrCreate(atPath: path)
        } catch {
            if ProtectedData.isUnavailable(error) { return .protectedDataUnavailable }
            throw .outboxStorageFailed(error.description)
        }
        guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(file.descriptor)
            if code == EWOULDBLOCK || code == EAGAIN || code == EINTR { return .heldElsewhere }
            throw .outboxStorageFailed(FileFailure(path: path, action: "lock", code: code).description)
        }
        let holder = Array("\(getpid())\n".utf8)
        if ftruncate(file.descriptor, 0) == 0 {
            _ = holder.withUnsafeBytes { pwrite(file.descriptor, $0.baseAddress, $0.count, 0) }
        }
        return .acquired(FolderLock(descriptor: file.descriptor))
    }

    /// Who holds the lock, as far as its file says: `process 1234`.
    static func holderDescription(in folderPath: String) -> String {
        let text = (try? OwnerOnlyFiles.read(atPath: path(in: folderPath), limit: 64)).flatMap { $0 }
            .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        return text.isEmpty || Int32(text) == nil ? "another process" : "process \(text)"
    }
}
