import Foundation

/// This process's resident memory, for tests that check memory stays flat.
enum ResidentMemory {
    /// Resident bytes now, from /proc/self/statm; `nil` where that does not exist (Apple platforms).
    static var bytes: Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
