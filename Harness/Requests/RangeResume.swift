@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `-C -` or `-C OFFSET` asked for the rest of a body, and the server sent all of it: curl's
/// exit code 33, and nothing is written.
struct ResumeRefused: Error, Sendable, CustomStringConvertible {
    let status: Int

    var description: String {
        "the server does not resume: it answered \(status) with the whole body instead of the range asked for (nothing written)"
    }
}

/// How `-C` continues a body, decided before anything is sent.
enum RangeResume {
    /// What to do with the file `-o` names.
    enum Plan: Sendable, Equatable {
        /// No range: the whole body, as without `-C`.
        case whole
        /// The partial file a broken download of this harness left (`FILE.convey-partial`): Convey
        /// resumes it with `Range` and `If-Range`, and puts the file in place when complete.
        case partialFile
        /// Ask for the body from this byte, and append what comes to the file (or print it).
        case from(Int64)
    }

    /// The plan for `resume` with the file `-o` names (`nil`: the body goes to stdout).
    static func plan(_ resume: OutputOptions.Resume?, file: URL?) -> Plan {
        guard let resume else { return .whole }
        switch resume {
        case .at(let offset):
            return offset > 0 ? .from(offset) : .whole
        case .atFileEnd:
            guard let file, !OutputFile.writesThrough(file) else { return .whole }
            let path = file.path(percentEncoded: false)
            if FileManager.default.fileExists(atPath: path + ".convey-partial") { return .partialFile }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            return size > 0 ? .from(size) : .whole
        }
    }
}
