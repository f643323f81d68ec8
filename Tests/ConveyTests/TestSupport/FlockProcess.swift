#if os(Linux)
import Foundation
import Testing

/// Another process that takes a `flock` on a file, with `flock(1)`: it waits for the lock, says
/// `taken` once it has it, and holds it until `finish()`.
final class FlockProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output: URL

    init(locking path: String) throws {
        output = FileManager.default.temporaryDirectory.appending(path: "convey-flock-\(UUID().uuidString)")
        try Data().write(to: output)
        process.executableURL = URL(filePath: "/usr/bin/flock")
        process.arguments = ["-x", path, "-c", "echo taken; cat > /dev/null"]
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
    }

    /// Whether it has the lock.
    var hasTaken: Bool {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("taken")
    }

    /// Lets go of the lock and waits for the process to end.
    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: output)
    }

    /// Whether some process holds a lock on `path` now: `flock -n` fails at once when one does.
    static func isLocked(_ path: String) throws -> Bool {
        let probe = Process()
        probe.executableURL = URL(filePath: "/usr/bin/flock")
        probe.arguments = ["-n", path, "-c", "true"]
        try probe.run()
        probe.waitUntilExit()
        return probe.terminationStatus != 0
    }

    /// Whether `flock(1)` is there.
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/flock") }
}
#endif
