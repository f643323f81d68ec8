import Foundation

/// Files sent as bodies or parts: checked before anything is sent, then read in chunks, never
/// whole in memory.
enum UploadFile {
    /// How much of a file is read at a time.
    static let chunkSize = 256 * 1024

    /// The size of a file about to be sent, after checking that it is a readable regular file.
    /// `subject` names the file in errors, such as `multipart part "photo"`.
    static func size(of file: URL, subject: String) throws -> Int64 {
        guard file.isFileURL else { throw ConveyError.upload(subject, "\(file.absoluteString) is not a file URL") }
        let path = file.path(percentEncoded: false)
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw ConveyError.upload(subject, FileManager.default.fileExists(atPath: path)
                                     ? "its attributes cannot be read: \(error.localizedDescription)" : "the file does not exist")
        }
        switch attributes[.type] as? FileAttributeType {
        case .typeRegular?: break
        case .typeDirectory?: throw ConveyError.upload(subject, "it is a directory, not a regular file")
        default: throw ConveyError.upload(subject, "it is not a regular file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw ConveyError.upload(subject, "it is not readable") }
        switch attributes[.size] {
        case let size as NSNumber: return size.int64Value
        case let size as UInt64: return Int64(clamping: size)
        case let size as Int: return Int64(size)
        default: throw ConveyError.upload(subject, "its size cannot be read")
        }
    }

    /// Calls `body` with the file's bytes, one chunk at a time, and stops with `CancellationError`
    /// between chunks when the task is cancelled.
    static func forEachChunk(of file: URL, subject: String, _ body: (Data) throws -> Void) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw ConveyError.upload(subject, FileManager.default.fileExists(atPath: file.path(percentEncoded: false))
                                     ? "it cannot be opened: \(error.localizedDescription)" : "the file does not exist")
        }
        defer { try? handle.close() }
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: chunkSize)
            } catch {
                throw ConveyError.upload(subject, "reading it failed: \(error.localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { return }
            try body(chunk)
            try Task.checkCancellation()
        }
    }

    /// The body for a file upload: the file itself, streamed from disk, or a gzipped copy staged
    /// in `stagingDirectory` when `compression` applies to its size.
    @concurrent
    static func requestBody(for file: URL, contentType: String, compression: UploadCompression,
                            stagingDirectory: URL) async throws -> RequestBody {
        let subject = "the upload file \(file.path(percentEncoded: false))"
        let size = try size(of: file, subject: subject)
        guard compression.applies(toSize: size) else { return RequestBody(file: file, contentType: contentType) }
        let staged = try BodyStaging.stage(in: stagingDirectory) { sink in
            let gzip = try GzipSink(into: sink)
            try forEachChunk(of: file, subject: subject) { try gzip.write($0) }
            try gzip.finish()
        }
        return RequestBody(file: staged, contentType: contentType, removeWhenDone: true, contentEncoding: UploadCompression.gzipEncoding)
    }
}
