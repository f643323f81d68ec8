#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A request body that curl pulls through its read callback: bytes in memory, or a file streamed
/// from disk.
///
/// A value: the sender opens it, the event loop reads it while the transfer runs (the transfer's
/// loop state keeps the position, `CurlTransferState`), and the sender closes it once the
/// transfer is back.
struct CurlRequestBody: Sendable {
    private enum Source: Sendable {
        case data(Data)
        case file(descriptor: Int32)
    }

    private let source: Source
    /// The body's size.
    let size: Int64

    /// A body held in memory.
    init(data: Data) {
        source = .data(data)
        size = Int64(data.count)
    }

    /// A body streamed from a file; throws `URLError(.fileDoesNotExist)` or
    /// `URLError(.cannotOpenFile)` when the file cannot be read.
    init(file: URL) throws {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw URLError(errno == ENOENT ? .fileDoesNotExist : .noPermissionsToReadFile, userInfo: [
                NSLocalizedDescriptionKey: "cannot open the body file \(file.path): \(String(cString: strerror(errno)))",
                NSURLErrorFailingURLErrorKey: file,
            ])
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            closeFile(descriptor)
            throw URLError(.cannotOpenFile, userInfo: [
                NSLocalizedDescriptionKey: "the body file \(file.path) is not a regular file",
                NSURLErrorFailingURLErrorKey: file,
            ])
        }
        source = .file(descriptor: descriptor)
        size = Int64(status.st_size)
    }

    /// Fills `buffer` with the bytes from `offset` on (a file is read where it stands, which is
    /// `offset`, since only this reads it); 0 at the end, `nil` when reading failed.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int? {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        switch source {
        case .data(let data):
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { bytes in
                if let start = bytes.baseAddress { base.copyMemory(from: start + offset, byteCount: count) }
            }
            return count
        case .file(let descriptor):
            var result: Int
            repeat { result = readFile(descriptor, base, buffer.count) } while result < 0 && errno == EINTR
            return result >= 0 ? result : nil
        }
    }

    /// Releases the file; the sender calls it once the transfer is over.
    func close() {
        switch source {
        case .data: break
        case .file(let descriptor): closeFile(descriptor)
        }
    }
}

// The C library's calls, out of reach of the methods of the same name above.
private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func closeFile(_ descriptor: Int32) {
    _ = close(descriptor)
}
#endif
