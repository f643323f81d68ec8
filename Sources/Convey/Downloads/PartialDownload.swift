import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A download on its way to `destination`: the bytes so far in a file beside it
/// (`<name>.convey-partial`), and a small record of what they are (`<name>.convey-partial.json`)
/// so that a later run can resume them, and only them.
struct PartialDownload: Sendable {
    /// What the partial bytes are a prefix of.
    struct Record: Codable, Sendable, Equatable {
        /// The URL they came from.
        var url: String
        /// The strong `ETag`, else the `Last-Modified` date, that `If-Range` sends back.
        var validator: String
    }

    /// Where to resume: the bytes on disk and the validator they were received under.
    struct ResumePoint: Sendable, Equatable {
        var offset: Int64
        var validator: String
    }

    let destination: URL

    var file: URL { destination.appendingPathExtension("convey-partial") }
    var recordFile: URL { file.appendingPathExtension("json") }

    /// Where a download of `url` can resume, or `nil`: nothing on disk, no record, another URL.
    func resumePoint(for url: URL?) -> ResumePoint? {
        guard let url, let data = try? Data(contentsOf: recordFile),
              let record = try? JSONDecoder().decode(Record.self, from: data), record.url == url.absoluteString,
              let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber,
              size.int64Value > 0
        else { return nil }
        return ResumePoint(offset: size.int64Value, validator: record.validator)
    }

    /// Notes what the partial bytes are, so that they can be resumed; `nil` makes them unresumable.
    func saveRecord(_ record: Record?) throws {
        guard let record else {
            try? FileManager.default.removeItem(at: recordFile)
            return
        }
        try JSONEncoder().encode(record).write(to: recordFile, options: .atomic)
    }

    /// Whether a record says the partial bytes can be resumed.
    var isResumable: Bool { FileManager.default.fileExists(atPath: recordFile.path) }

    /// Removes the partial bytes and their record.
    func discard() {
        try? FileManager.default.removeItem(at: file)
        try? FileManager.default.removeItem(at: recordFile)
    }

    /// Puts the finished file in place of `destination` in one step, replacing what was there.
    func commit() throws {
        guard rename(file.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw ConveyError.downloadFailed(DownloadFailure(destination: destination, reason: "could not move the finished file into place: \(reason)"))
        }
        try? FileManager.default.removeItem(at: recordFile)
    }
}
