import Foundation

/// Temporary files holding request bodies too large for memory.
///
/// A staged file is created in the task's `stagingDirectory` (readable by its owner only) and
/// filled in chunks. If filling it fails or is cancelled, it is removed here at once; otherwise the
/// body is sent as `.file(_, removeWhenDone: true)` and the pipeline removes it after the attempt,
/// whether the attempt succeeded, failed or was cancelled.
enum BodyStaging {
    /// Creates a staged file, lets `write` fill it, and returns it.
    static func stage(in directory: URL, _ write: (inout FileSink) throws -> Void) throws -> URL {
        let file = directory.appending(path: "convey-upload-\(UUID().uuidString).body", directoryHint: .notDirectory)
        let path = file.path(percentEncoded: false)
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory.path(percentEncoded: false), isDirectory: &isDirectory)
            throw ConveyError.upload("the staged request body in \(directory.path(percentEncoded: false))",
                                     exists && isDirectory.boolValue ? "a file cannot be created there" : "the staging directory does not exist")
        }
        do {
            let handle = try FileSink.open(file)
            do {
                var sink = FileSink(handle: handle, file: file)
                try write(&sink)
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            return file
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }
}

/// Appends a body to its staged file.
struct FileSink: BodySink {
    fileprivate let handle: FileHandle
    fileprivate let file: URL

    fileprivate static func open(_ file: URL) throws -> FileHandle {
        do {
            return try FileHandle(forWritingTo: file)
        } catch {
            throw failure(file, error)
        }
    }

    mutating func write(_ bytes: Data) throws {
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw Self.failure(file, error)
        }
    }

    mutating func finish() {}

    private static func failure(_ file: URL, _ error: any Error) -> ConveyError {
        .upload("the staged request body \(file.path(percentEncoded: false))", error.localizedDescription)
    }
}

/// Where an upload body's bytes go as it is written, chunk by chunk: memory, a staged file, or
/// gzip in front of either. Writers never need the whole body at once.
protocol BodySink {
    /// Appends bytes to the body.
    mutating func write(_ bytes: Data) throws
    /// Flushes anything buffered; nothing is written after it.
    mutating func finish() throws
}

/// Collects a body in memory, for bodies small enough to send as `httpBody`.
struct MemorySink: BodySink {
    /// The body written so far.
    private(set) var data = Data()

    mutating func write(_ bytes: Data) { data.append(bytes) }
    mutating func finish() {}
}
