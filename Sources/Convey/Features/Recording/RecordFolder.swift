import Foundation

/// The on-disk side of recording: one JSON file per record, named `<UTC time>-<random>.json`
/// so that names sort by time and two writers never pick the same name.
///
/// A record is written to a hidden temporary file in the same folder (created exclusively,
/// owner-only) and renamed into place, so readers never see half a record and a link planted at a
/// record's name is replaced, never written through. The folder is created owner-only (0700):
/// records hold URLs and headers. Reading opens only regular files, never through a link.
/// Every operation tolerates files vanishing underneath it (another process pruning the same folder).
struct RecordFolder: Sendable {
    let url: URL

    private static let temporaryPrefix = ".tmp-"
    private static let suffix = ".json"
    /// Temporary files older than this belong to a writer that died mid-write.
    private static let abandonedTemporaryAge: TimeInterval = 600
    /// The largest record file read: two bodies at `TaskRecorder.maximumBodyLimit`, JSON-escaped, and the rest.
    private static let recordSizeLimit = 64 << 20

    /// `20251121T012030123Z-1a2b3c4d`: the time to the millisecond in UTC, then 8 random hex digits.
    /// Plain integer arithmetic: no calendar and no formatter, since it runs for every record.
    static func newID(at date: Date) -> String {
        let milliseconds = max(0, Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
        let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (days, secondOfDay) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return digits(year, 4) + digits(month, 2) + digits(day, 2) + "T" + digits(secondOfDay / 3600, 2)
            + digits(secondOfDay / 60 % 60, 2) + digits(secondOfDay % 60, 2) + digits(millisecond, 3) + "Z-"
            + String(repeating: "0", count: 8 - random.count) + random
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// Whether the text has the shape of a record ID: `yyyyMMdd'T'HHmmssSSS'Z'-xxxxxxxx`.
    static func isRecordID(_ text: String) -> Bool {
        guard text.utf8.count == 28 else { return false }
        var index = 0
        for character in text.utf8 {
            let fits = switch index {
            case 8: character == UInt8(ascii: "T")
            case 18: character == UInt8(ascii: "Z")
            case 19: character == UInt8(ascii: "-")
            case 20...: isDigit(character) || (character >= UInt8(ascii: "a") && character <= UInt8(ascii: "f"))
            default: isDigit(character)
            }
            guard fits else { return false }
            index += 1
        }
        return true
    }

    private static func isDigit(_ character: UInt8) -> Bool {
        character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9")
    }

    /// Writes a record atomically: a temporary file, then a rename.
    func write(_ record: RecordedTask) throws {
        try OwnerOnlyFiles.createFolder(atPath: url.path(percentEncoded: false))
        let data = try RecordedTask.makeJSONEncoder().encode(record)
        let temporary = url.appending(path: Self.temporaryPrefix + record.id + Self.suffix).path(percentEncoded: false)
        let destination = fileURL(forID: record.id).path(percentEncoded: false)
        let written = data.withUnsafeBytes { bytes in
            Result { () throws(FileFailure) in try OwnerOnlyFiles.replace(atPath: destination, temporaryPath: temporary, with: bytes) }
        }
        try written.get()
    }

    /// The IDs of the records in the folder, newest first.
    func recordIDs() -> [String] {
        names().compactMap { name -> String? in
            guard name.hasSuffix(Self.suffix) else { return nil }
            let id = String(name.dropLast(Self.suffix.count))
            return Self.isRecordID(id) ? id : nil
        }.sorted(by: >)
    }

    /// The record with this ID, or `nil` when it is missing, unreadable or of an unknown format.
    func read(id: String) -> RecordedTask? {
        guard Self.isRecordID(id),
              let bytes = try? OwnerOnlyFiles.read(atPath: fileURL(forID: id).path(percentEncoded: false), limit: Self.recordSizeLimit)
        else { return nil }
        guard var record = try? RecordedTask.makeJSONDecoder().decode(RecordedTask.self, from: Data(bytes)),
              record.formatVersion == RecordedTask.currentFormatVersion else { return nil }
        record.id = id
        return record
    }

    /// Removes records beyond the newest `maxCount`, records older than `maxAge`, and abandoned
    /// temporary files. IDs sort by time, so ages are compared as text: no dates are parsed.
    func prune(maxCount: Int, maxAge: TimeInterval, now: Date) {
        let oldestKept = Self.newID(at: now.addingTimeInterval(-maxAge))
        for (index, id) in recordIDs().enumerated() where index >= maxCount || id < oldestKept {
            try? FileManager.default.removeItem(at: fileURL(forID: id))
        }
        let abandoned = Self.newID(at: now.addingTimeInterval(-Self.abandonedTemporaryAge))
        for name in names() where name.hasPrefix(Self.temporaryPrefix) && name.hasSuffix(Self.suffix) {
            let id = String(name.dropFirst(Self.temporaryPrefix.count).dropLast(Self.suffix.count))
            if Self.isRecordID(id), id < abandoned {
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
