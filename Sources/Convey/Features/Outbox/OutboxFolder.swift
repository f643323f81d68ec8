import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The outbox's folder on disk: one request file per item (`ID.item`, written once), one state
/// file per item once it has been tried (`ID.state`, replaced as delivery goes on), the owner's
/// `.lock`, and `set-aside/` for files that are not sound items.
///
/// - An item appears whole or not at all: its file is written under a temporary name, synced,
///   renamed into place, and the folder synced (`DurableFiles`). A process killed before the
///   rename leaves a temporary file, which the owner removes once its writer is gone.
/// - Every file is input, not trust: opened without following a link, only when it is a regular
///   file, without blocking (a FIFO is refused, not waited on), its size and every length in it
///   checked before anything is read (`OutboxFileFormat`). A file that is not a sound item is
///   moved to `set-aside/` with a `.reason` file beside it, by the folder's owner; the others
///   list it as damaged.
/// - Files are owner-only (0600), folders owner-only (0700) (`OwnerOnlyFiles`).
/// - A file whose data is protected and unavailable for now (a locked device: `ProtectedData`)
///   is no damage: its item is neither read nor set aside until it can be read.
///
/// Its methods block on the disk: the outbox calls them off `ConveyActor`.
final class OutboxFolder: Sendable {
    let url: URL
    let path: String
    /// The most bytes a request body may have.
    let maximumBodySize: Int64

    static let setAsideFolderName = "set-aside"
    /// Temporary files whose writer is alive are left alone unless they are older than this.
    private static let abandonedTemporaryAge: TimeInterval = 24 * 3600

    init(url: URL, maximumBodySize: Int64) throws(ConveyError) {
        self.url = url
        path = url.standardizedFileURL.path(percentEncoded: false)
        self.maximumBodySize = maximumBodySize
        do {
            try OwnerOnlyFiles.createFolder(atPath: path)
        } catch {
            throw .outboxStorageFailed(error.description)
        }
        guard access(path, W_OK) == 0 else { throw .outboxStorageFailed("\(path) is not writable") }
    }

    // MARK: - Names

    /// Whether `id` has the form the outbox gives IDs: 16 hex digits, `-`, 8 hex digits.
    static func isItemID(_ id: some StringProtocol) -> Bool {
        let utf8 = Array(id.utf8)
        guard utf8.count == 25, utf8[16] == UInt8(ascii: "-") else { return false }
        return utf8.enumerated().allSatisfy { index, byte in
            index == 16 || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
    }

    func itemPath(_ id: String) -> String { path + "/" + id + ".item" }
    func statePath(_ id: String) -> String { path + "/" + id + ".state" }

    // MARK: - Writing

    /// Writes a new item durably: returns once its file and the folder are synced.
    /// Returns the file's size.
    func writeItem(id: String, request: StoredRequest, body: Data) throws(ConveyError) -> Int64 {
        let record = try encodeRecord(request)
        let bytes = OutboxFileFormat.encode(magic: OutboxFileFormat.requestMagic, record: record, bytes: body)
        try writeDurably(bytes, atPath: itemPath(id), written: .enqueueWritten, renamed: .enqueueRenamed)
        return Int64(bytes.count)
    }

    /// Replaces an item's state. `durable` syncs the file and the folder, for the states an app
    /// is told about (delivered, failed); the others are cheap renames, and a state file lost to a
    /// power cut reads as damaged, which makes its item pending again (sent with the same key).
    func writeState(id: String, state: StoredState, bytes: Data, durable: Bool) throws(ConveyError) {
        let record = try encodeRecord(state)
        let file = OutboxFileFormat.encode(magic: OutboxFileFormat.stateMagic, record: record, bytes: bytes)
        if durable {
            try writeDurably(file, atPath: statePath(id), written: nil, renamed: state.phase == .delivered ? .deliveredWritten : nil)
        } else {
            let target = statePath(id)
            do {
                try file.withUnsafeBytes { buffer in
                    try OwnerOnlyFiles.replace(atPath: target, temporaryPath: OwnerOnlyFiles.temporaryPath(besides: target), with: buffer)
                }
            } catch {
                throw .outboxStorageFailed(String(describing: error))
            }
        }
    }

    /// Removes an item's files; the request file first, so that the item is gone at once.
    func remove(id: String) throws(ConveyError) {
        for file in [itemPath(id), statePath(id)] where unlink(file) != 0 && errno != ENOENT {
            throw .outboxStorageFailed(FileFailure(path: file, action: "remove", code: errno).description)
        }
        do { try DurableFiles.syncFolder(atPath: path) } catch { throw .outboxStorageFailed(error.description) }
    }

    private func encodeRecord(_ value: some Encodable) throws(ConveyError) -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw .outboxStorageFailed("could not encode an item's record: \(error)")
        }
    }

    /// A new file at `target` in one step: written to a temporary file beside it, synced,
    /// renamed over it, and the folder synced.
    private func writeDurably(_ bytes: [UInt8], atPath target: String, written: OutboxCrashPoint?, renamed: OutboxCrashPoint?) throws(ConveyError) {
        var syncFailure: Int32 = 0
        do {
            try bytes.withUnsafeBytes { buffer in
                try OwnerOnlyFiles.replace(atPath: target, temporaryPath: OwnerOnlyFiles.temporaryPath(besides: target), with: buffer) { descriptor in
                    syncFailure = DurableFiles.sync(descriptor)
                    if syncFailure == 0 { written?.reach() }
                }
            }
        } catch {
            throw .outboxStorageFailed(String(describing: error))
        }
        guard syncFailure == 0 else {
            unlink(target)
            throw .outboxStorageFailed(FileFailure(path: target, action: "sync", code: syncFailure).description)
        }
        renamed?.reach()
        do { try DurableFiles.syncFolder(atPath: path) } catch { throw .outboxStorageFailed(error.description) }
    }

    // MARK: - Reading

    /// One item as the folder holds it, without its body.
    struct ScannedItem: Sendable {
        let id: String
        var request: StoredRequest
        var state: StoredState?
        /// The bytes of the request file, for the size limit.
        var size: Int64
        /// Why the state file could not be used, when it could not.
        var stateDamage: String?
    }

    /// What a scan found.
    struct Scan: Sendable {
        var items: [ScannedItem] = []
        /// Files that are not sound items, and why: those set aside, and (when the scan was not the
        /// owner's) those still in place.
        var damaged: [(name: String, reason: String)] = []
        /// Items whose files cannot be read for now: their data is protected and unavailable (a
        /// locked device). Neither items nor damage until they can be read.
        var unavailable: Set<String> = []
    }

    /// Reads every item. The owner (`tidy`) also sets aside damaged files, removes state files
    /// left by dropped items and temporary files left by dead writers, and removes delivered
    /// items older than `deliveredRetention`.
    /// With `skipping`, reads only the items whose IDs it does not hold (and does not tidy): a
    /// cheap look for items other processes enqueued.
    func scan(tidy: Bool, now: Date, deliveredRetention: Duration?, skipping known: Set<String>? = nil) -> Scan {
        var scan = Scan()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var itemIDs: Set<String> = []
        let tidy = tidy && known == nil
        for name in names where name.hasSuffix(".item") {
            let id = String(name.dropLast(5))
            guard Self.isItemID(id) else { continue }
            itemIDs.insert(id)
            if known?.contains(id) == true { continue }
            do throws(OutboxDamage) {
                var item = try readItemHeader(id: id)
                do throws(OutboxDamage) {
                    item.state = try readState(id: id)?.state
                } catch where error.isUnavailable {
                    throw error
                } catch {
                    item.stateDamage = error.reason
                }
                if tidy, let retention = deliveredRetention, let state = item.state, state.phase == .delivered,
                   let finished = state.finishedAt, now.timeIntervalSince(finished) > retention.timeInterval {
                    try? remove(id: id)
                    continue
                }
                scan.items.append(item)
            } catch where error.isUnavailable {
                scan.unavailable.insert(id)
            } catch {
                if tidy { setAside(id: id, reason: error.reason) } else { scan.damaged.append((name, error.reason)) }
            }
        }
        if tidy {
            for name in names {
                if name.hasSuffix(".state"), Self.isItemID(name.dropLast(6)), !itemIDs.contains(String(name.dropLast(6))) {
                    unlink(path + "/" + name)
                } else if name.hasPrefix("."), name.hasSuffix(".tmp"), isAbandonedTemporary(name, now: now) {
                    unlink(path + "/" + name)
                }
            }
        }
        scan.damaged += setAsideFiles()
        scan.items.sort { $0.id < $1.id }
        return scan
    }

    /// The request of an item, its record checked, without reading its body.
    func readItemHeader(id: String) throws(OutboxDamage) -> ScannedItem {
        let file = try openItemFile(itemPath(id))
        defer { close(file.descriptor) }
        let header = try readPrefix(file, count: OutboxFileFormat.headerSize, path: itemPath(id))
        let lengths = try OutboxFileFormat.lengths(ofHeader: header, magic: OutboxFileFormat.requestMagic, fileSize: file.size)
        guard lengths.bytes <= maximumBodySize else {
            throw OutboxDamage("its body of \(lengths.bytes) bytes is larger than the outbox's maximumBodySize (\(maximumBodySize))")
        }
        let prefix = try readPrefix(file, count: OutboxFileFormat.headerSize + lengths.record, path: itemPath(id))
        let record = try OutboxFileFormat.record(in: prefix)
        let request = try decode(StoredRequest.self, from: record, what: "request")
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https", request.url.host != nil else {
            throw OutboxDamage("its URL is not an absolute http(s) URL")
        }
        return ScannedItem(id: id, request: request, state: nil, size: file.size)
    }

    /// An item's request and body, all of it checked: what an attempt sends.
    func readItem(id: String) throws(OutboxDamage) -> (request: StoredRequest, body: Data) {
        let file = try openItemFile(itemPath(id))
        defer { close(file.descriptor) }
        // Read whole into memory: at most what memory can count (2 GiB where `Int` has 32 bits).
        let limit = MemorySizes.bufferLimit(MemorySizes.sum(Int64(OutboxFileFormat.headerSize + OutboxFileFormat.maximumRecordSize), maximumBodySize))
        guard file.size <= limit else { throw OutboxDamage("it holds \(file.size) bytes, more than an item may (\(limit))") }
        let bytes: [UInt8]
        do {
            bytes = try OwnerOnlyFiles.readAll(file, limit: Int(limit), path: itemPath(id))
        } catch {
            throw OutboxDamage(error.reason, unavailable: ProtectedData.isUnavailable(error))
        }
        let parts = try OutboxFileFormat.decode(bytes, magic: OutboxFileFormat.requestMagic)
        return (try decode(StoredRequest.self, from: parts.record, what: "request"), parts.bytes)
    }

    /// An item's state and the body it keeps, or `nil` when it has none yet.
    func readState(id: String) throws(OutboxDamage) -> (state: StoredState, bytes: Data)? {
        let statePath = statePath(id)
        let file: OwnerOnlyFiles.OpenedFile
        do {
            guard let opened = try OwnerOnlyFiles.openForReading(atPath: statePath) else { return nil }
            file = opened
        } catch {
            throw OutboxDamage("its state file: \(error.reason)", unavailable: ProtectedData.isUnavailable(error))
        }
        defer { close(file.descriptor) }
        let limit = Int64(OutboxFileFormat.headerSize + OutboxFileFormat.maximumRecordSize) + OutboxFolder.maximumKeptResponseSize
        guard file.size <= limit else { throw OutboxDamage("its state file holds \(file.size) bytes, more than a state may (\(limit))") }
        do {
            // `limit` is a few tens of MiB: it fits any `Int`.
            let bytes = try OwnerOnlyFiles.readAll(file, limit: Int(limit), path: statePath)
            let parts = try OutboxFileFormat.decode(bytes, magic: OutboxFileFormat.stateMagic)
            return (try decode(StoredState.self, from: parts.record, what: "state"), parts.bytes)
        } catch let failure as FileFailure {
            throw OutboxDamage("its state file: \(failure.reason)", unavailable: ProtectedData.isUnavailable(failure))
        } catch let damage as OutboxDamage {
            throw OutboxDamage("its state file: \(damage.reason)")
        } catch {
            throw OutboxDamage("its state file: \(error)")
        }
    }

    /// The largest response body a state file keeps (a larger response fails its attempt with
    /// `responseTooLarge` before it gets here, see `Outbox.Configuration.maximumResponseSize`).
    static let maximumKeptResponseSize: Int64 = 64 << 20

    private func openItemFile(_ path: String) throws(OutboxDamage) -> OwnerOnlyFiles.OpenedFile {
        do {
            guard let file = try OwnerOnlyFiles.openForReading(atPath: path) else { throw OutboxDamage("it disappeared while being read") }
            return file
        } catch let damage as OutboxDamage {
            throw damage
        } catch let failure as FileFailure {
            throw OutboxDamage(failure.reason, unavailable: ProtectedData.isUnavailable(failure))
        } catch {
            throw OutboxDamage("\(error)")
        }
    }

    private func readPrefix(_ file: OwnerOnlyFiles.OpenedFile, count: Int, path: String) throws(OutboxDamage) -> [UInt8] {
        let wanted = Int(min(Int64(count), max(file.size, 0)))
        var bytes = [UInt8](repeating: 0, count: wanted)
        var offset = 0
        while offset < wanted {
            let read = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { pread(file.descriptor, $0 + offset, wanted - offset, off_t(offset)) } ?? 0
            }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else {
                let code = read < 0 ? errno : 0
                throw OutboxDamage(read < 0 ? String(cString: strerror(code)) : "it was cut short while being read",
                                   unavailable: ProtectedData.isUnavailable(code, path: path))
            }
            offset += read
        }
        return bytes
    }

    private func decode<Value: Decodable>(_ type: Value.Type, from record: Data, what: String) throws(OutboxDamage) -> Value {
        do {
            return try JSONDecoder().decode(type, from: record)
        } catch {
            throw OutboxDamage("its \(what) record is not readable JSON of the expected shape")
        }
    }

    // MARK: - Setting aside

    /// Moves an item's files to `set-aside/` with a `.reason` file saying why. Renaming moves a
    /// link, a FIFO or a folder itself, never what it points to.
    func setAside(id: String, reason: String) {
        let folder = path + "/" + Self.setAsideFolderName
        try? OwnerOnlyFiles.createFolder(atPath: folder)
        for name in [id + ".item", id + ".state"] {
            var target = folder + "/" + name
            var suffix = 1
            while access(target, F_OK) == 0 || errno != ENOENT {
                target = folder + "/" + name + ".\(suffix)"
                suffix += 1
                if suffix > 1000 { break }
            }
            guard rename(path + "/" + name, target) == 0 else { continue }
            if name.hasSuffix(".item") {
                let text = Array((reason + "\n").utf8)
                _ = try? text.withUnsafeBytes { buffer in
                    try OwnerOnlyFiles.replace(atPath: target + ".reason", temporaryPath: OwnerOnlyFiles.temporaryPath(besides: target + ".reason"), with: buffer)
                }
            }
        }
        try? DurableFiles.syncFolder(atPath: path)
    }

    /// The files in `set-aside/` and their reasons.
    func setAsideFiles() -> [(name: String, reason: String)] {
        let folder = path + "/" + Self.setAsideFolderName
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        return names.filter { !$0.hasSuffix(".reason") && !$0.hasPrefix(".") && !$0.contains(".state") }.map { name in
            let reason = (try? OwnerOnlyFiles.read(atPath: folder + "/" + name + ".reason", limit: 4096)).flatMap { $0 }
                .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            return (Self.setAsideFolderName + "/" + name, reason ?? "set aside")
        }
    }

    /// Whether a temporary file's writer (the process ID in its name) is gone, or it is very old.
    private func isAbandonedTemporary(_ name: String, now: Date) -> Bool {
        let stem = name.dropLast(4)
        if let dot = stem.lastIndex(of: "."), let dash = stem[dot...].firstIndex(of: "-"),
           let pid = Int32(stem[stem.index(after: dot)..<dash]), pid > 0, kill(pid, 0) != 0, errno == ESRCH {
            return true
        }
        var info = stat()
        guard lstat(path + "/" + name, &info) == 0 else { return false }
        #if canImport(Darwin)
        let modified = Double(info.st_mtimespec.tv_sec)
        #else
        let modified = Double(info.st_mtim.tv_sec)
        #endif
        return now.timeIntervalSince1970 - modified > Self.abandonedTemporaryAge
    }
}
