import Foundation

/// Adds entries to a HAR file, creating it when missing: what record and capture modes do after
/// each exchange.
///
/// Every append to one path goes through one serial queue, off the caller's thread (disk work
/// never runs on `ConveyActor`), and reads the file afresh: any number of transports in this
/// process, in parallel tests, append to one file without losing each other's entries. Each
/// append writes a whole new file and renames it into place (`HARFileWriter`), which costs the
/// file's size per exchange: fixtures are meant to be small.
enum HARAppender {
    /// The largest HAR file read, for replay and before an append.
    static let maximumFileSize = 256 << 20

    /// Appends the entries `make` returns to the file at `path` (`comment`, when given, goes into
    /// the log's comment) and returns what else `make` returned. `make` runs on the file's queue,
    /// so building entries (masking, reading a body file) happens off the caller's thread too.
    static func append<Extra: Sendable>(to path: String, comment: String?,
                                        _ make: @escaping @Sendable () throws(HARError) -> (entries: [HAREntry], extra: Extra)) async throws(HARError) -> Extra {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Extra, HARError>, Never>) in
            HARFileQueues.queue(for: path).async {
                continuation.resume(returning: Result { () throws(HARError) in
                    let made = try make()
                    try appendNow(made.entries, to: path, comment: comment)
                    return made.extra
                })
            }
        }
        return try result.get()
    }

    private static func appendNow(_ entries: [HAREntry], to path: String, comment: String?) throws(HARError) {
        let existing: [UInt8]?
        do throws(FileFailure) {
            existing = try OwnerOnlyFiles.read(atPath: path, limit: maximumFileSize)
        } catch {
            throw HARError.unreadableFile(path: path, reason: error.reason)
        }
        let splice: HARDocumentSplice
        var ending: [UInt8]?
        if let existing, !existing.allSatisfy(isWhitespace) {
            splice = try HARDocumentSplice(document: existing, path: path, addingComment: comment)
        } else {
            splice = HARDocumentSplice.newDocument()
            ending = HARDocumentSplice.newDocumentEnding(comment: comment)
        }
        let writer = try HARFileWriter(path: path, splice: splice)
        for entry in entries { try writer.append(entry) }
        try writer.finish(ending: ending)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// One serial queue per HAR file, keyed by its standardized path.
enum HARFileQueues {
    private static let registry = Registry()

    static func queue(for path: String) -> DispatchQueue {
        registry.queue(for: URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    private final class Registry: Sendable {
        private let queues = InlineLocked<[String: DispatchQueue]>([:])

        func queue(for key: String) -> DispatchQueue {
            queues.withLock { queues in
                if let queue = queues[key] { return queue }
                let queue = DispatchQueue(label: "Convey.HAR.\(queues.count)", qos: .utility)
                queues[key] = queue
                return queue
            }
        }
    }
}
