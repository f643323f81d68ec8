import Foundation

/// The on-disk side of recording: one JSON file per record, named `<UTC time>-<random>.json`
/// so that names sort by time and two writers never pick the same name.
///
/// A record is written to a hidden temporary file in the same folder and renamed into place, so
/// readers never see half a record. Every operation tolerates files vanishing underneath it
/// (another process pruning the same folder).
struct RecordFolder: Sendable {
    let url: URL

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()
    private static let temporaryPrefix = ".tmp-"
    private static let suffix = ".json"
    /// Temporary files older than this belong to a writer that died mid-write.
    private static let abandonedTemporaryAge: TimeInterval = 600

    /// `20251121T012030123Z-1a2b3c4d`: the time to the millisecond in UTC, then 8 random hex digits.
    static func newID(at date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let stamp = String(format: "%04d%02d%02dT%02d%02d%02d%03dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0,
                           parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, Int(millisecond))
        return stamp + "-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(8).lowercased()
    }

    /// The time in a record ID, or `nil` when the text is not a record ID.
    static func date(ofID id: String) -> Date? {
        let characters = Array(id.utf8)
        guard characters.count == 28, characters[8] == UInt8(ascii: "T"), characters[18] == UInt8(ascii: "Z"),
              characters[19] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            characters[range].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                ? Int(String(decoding: characters[range], as: UTF8.self)) : nil
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
              let minute = number(11..<13), let second = number(13..<15), let millisecond = number(15..<18) else { return nil }
        let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                                   nanosecond: millisecond * 1_000_000)
        return calendar.date(from: parts)
    }

    /// Writes a record atomically: a temporary file, then a rename.
    func write(_ record: RecordedTask) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(record)
        let temporary = url.appending(path: Self.temporaryPrefix + record.id + Self.suffix)
        try data.write(to: temporary, options: .withoutOverwriting)
        do {
            try FileManager.default.moveItem(at: temporary, to: fileURL(forID: record.id))
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The IDs of the records in the folder, newest first.
    func recordIDs() -> [String] {
        names().compactMap { name -> String? in
            guard name.hasSuffix(Self.suffix) else { return nil }
            let id = String(name.dropLast(Self.suffix.count))
            return Self.date(ofID: id) == nil ? nil : id
        }.sorted(by: >)
    }

    /// The record with this ID, or `nil` when it is missing, unreadable or of an unknown format.
    func read(id: String) -> RecordedTask? {
        guard Self.date(ofID: id) != nil, let data = try? Data(contentsOf: fileURL(forID: id)) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard var record = try? decoder.decode(RecordedTask.self, from: data),
              record.formatVersion == RecordedTask.currentFormatVersion else { return nil }
        record.id = id
        return record
    }

    /// Removes records beyond the newest `maxCount`, records older than `maxAge`, and abandoned
    /// temporary files.
    func prune(maxCount: Int, maxAge: TimeInterval, now: Date) {
        let oldestKept = now.addingTimeInterval(-maxAge)
        for (index, id) in recordIDs().enumerated() {
            if index >= maxCount || (Self.date(ofID: id) ?? now) < oldestKept {
                try? FileManager.default.removeItem(at: fileURL(forID: id))
            }
        }
        let abandoned = now.addingTimeInterval(-Self.abandonedTemporaryAge)
        for name in names() where name.hasPrefix(Self.temporaryPrefix) && name.hasSuffix(Self.suffix) {
            let id = String(name.dropFirst(Self.temporaryPrefix.count).dropLast(Self.suffix.count))
            if let date = Self.date(ofID: id), date < abandoned {
                try? FileManager.default.removeItem(at: url.appending(path: name))
            }
        }
    }

    /// Removes every record; returns how many were removed. Other files are left alone.
    func removeAll() -> Int {
        recordIDs().reduce(0) { count, id in
            (try? FileManager.default.removeItem(at: fileURL(forID: id))) == nil ? count : count + 1
        }
    }

    func fileURL(forID id: String) -> URL {
        url.appending(path: id + Self.suffix)
    }

    private func names() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.path(percentEncoded: false))) ?? []
    }
}
