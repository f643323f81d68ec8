import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Making writes survive a crash or a power loss: a file's bytes synced before it is renamed into
/// place, and the folder synced after, so that the rename itself is on disk.
///
/// On Apple platforms `fsync` only hands the bytes to the drive, whose cache may still lose them;
/// `fcntl(F_FULLFSYNC)` asks the drive to write them through, and is what is used there (with
/// `fsync` when the file system does not support it).
enum DurableFiles {
    /// Syncs an open file's bytes to the disk; returns `0`, or the `errno` of the failure.
    static func sync(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        while fsync(descriptor) != 0 {
            if errno != EINTR { return errno }
        }
        return 0
    }

    /// Syncs the folder at `path`, so that files created, renamed or removed in it stay so.
    static func syncFolder(atPath path: String) throws(FileFailure) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileFailure(path: path, action: "open the folder", code: errno) }
        defer { close(descriptor) }
        let failure = sync(descriptor)
        // Some file systems cannot sync a folder (EINVAL): their renames are as durable as they get.
        guard failure == 0 || failure == EINVAL else { throw FileFailure(path: path, action: "sync the folder", code: failure) }
    }
}
