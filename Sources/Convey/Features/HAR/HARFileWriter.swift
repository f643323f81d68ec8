import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a HAR file entry by entry, never holding more than one entry and a write buffer: the
/// document's start, each entry as it is given, then its end. The file is written to a new
/// owner-only file beside the destination (`OwnerOnlyFiles`) and renamed over it when finished,
/// so a reader never sees half a file, a failure leaves the old file as it was, and a link at the
/// destination is replaced, never written through.
final class HARFileWriter {
    private let path: String
    private let temporaryPath: String
    private var descriptor: Int32?
    private var splice: HARDocumentSplice
    private var json = HARJSONWriter(indent: 2, baseLevel: 3)
    private var buffer: [UInt8] = []
    private var wroteEntry = false

    /// How much is buffered before a write.
    private static let bufferSize = 256 * 1024

    /// Starts writing `splice`'s document to `path`: its prefix now, entries as they come, its suffix at the end.
    init(path: String, splice: HARDocumentSplice) throws(HARError) {
        self.path = path
        self.splice = splice
        temporaryPath = OwnerOnlyFiles.temporaryPath(besides: path)
        do throws(FileFailure) {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty { try OwnerOnlyFiles.createFolder(atPath: folder) }
            descriptor = try OwnerOnlyFiles.createNew(atPath: temporaryPath)
        } catch {
            throw HARError.unwritableFile(path: path, reason: error.reason)
        }
        buffer.reserveCapacity(Self.bufferSize)
        buffer += splice.prefix
        self.splice.prefix = []
    }

    deinit {
        abandon()
    }

    /// Writes one entry after the others.
    func append(_ entry: HAREntry) throws(HARError) {
        json.removeAll()
        entry.write(to: &json)
        if wroteEntry || splice.hasEntries { buffer.append(UInt8(ascii: ",")) }
        buffer += Array("\n".utf8) + Array(HARDocumentSplice.entryIndent.utf8)
        buffer += json.bytes
        wroteEntry = true
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes the document's end (`ending`, when given, instead of the splice's) and puts the file
    /// in place durably, as the outbox's items are (`DurableFiles`): the file synced, renamed over
    /// the destination, the folder synced. It waits for the syncs: call it from a queue of its own
    /// (`HARFileQueues`), never a task on the cooperative pool.
    func finish(ending: [UInt8]? = nil) throws(HARError) {
        buffer += ending ?? splice.suffix
        try flush()
        guard let descriptor else { throw HARError.unwritableFile(path: path, reason: "the writer was already finished") }
        self.descriptor = nil
        let syncFailure = DurableFiles.sync(descriptor)
        let synced = syncFailure == 0 ? nil : syncFailure
        let closed = close(descriptor) == 0 ? nil : errno
        if let code = synced ?? closed {
            unlink(temporaryPath)
            throw HARError.unwritableFile(path: path, reason: String(cString: strerror(code)))
        }
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw HARError.unwritableFile(path: path, reason: reason)
        }
        let folder = (path as NSString).deletingLastPathComponent
        do throws(FileFailure) {
            try DurableFiles.syncFolder(atPath: folder.isEmpty ? "." : folder)
        } catch {
            throw HARError.unwritableFile(path: path, reason: error.reason)
        }
    }

    /// Stops without touching the destination: the temporary file is removed.
    func abandon() {
        guard let descriptor else { return }
        self.descriptor = nil
        close(descriptor)
        unlink(temporaryPath)
    }

    private func flush() throws(HARError) {
        guard let descriptor else { throw HARError.unwritableFile(path: path, reason: "the writer was already finished") }
        let written = buffer.withUnsafeBytes { bytes in
            Result { () throws(FileFailure) in try OwnerOnlyFiles.writeAll(descriptor, bytes, path: temporaryPath) }
        }
        buffer.removeAll(keepingCapacity: true)
        do throws(FileFailure) {
            try written.get()
        } catch {
            abandon()
            throw HARError.unwritableFile(path: path, reason: error.reason)
        }
    }
}
