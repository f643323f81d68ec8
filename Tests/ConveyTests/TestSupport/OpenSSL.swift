import Foundation
import Testing

/// The `openssl` command line, which tests use to make certificates and keys and to compute what
/// Convey must agree with. `scripts/test` installs it (apt) when it is missing.
enum OpenSSL {
    /// The executable, from `PATH`.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(filePath: String($0)).appending(path: "openssl") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path(percentEncoded: false)) }
    }()

    /// Whether tests that need it run: it is there, or `scripts/test` requires it (then its absence fails them).
    static var enabled: Bool {
        executable != nil || ProcessInfo.processInfo.environment["CONVEY_REQUIRE_SERVERS"] != nil
    }

    /// Runs `openssl` with `arguments` in `folder` and returns its standard output; throws with
    /// its standard error when it fails.
    @discardableResult
    static func run(_ arguments: [String], in folder: URL) throws -> Data {
        let executable = try #require(executable, "openssl is not installed: run the suite with scripts/test")
        return try Command.run(executable, arguments, in: folder)
    }

    /// Runs a shell command line in `folder` (for openssl pipelines) and returns its standard
    /// output without the trailing line break.
    static func shell(_ commandLine: String, in folder: URL) throws -> String {
        _ = try #require(executable, "openssl is not installed: run the suite with scripts/test")
        let output = try Command.run(URL(filePath: "/bin/sh"), ["-c", commandLine], in: folder)
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new scratch folder under the temporary directory.
    static func scratchFolder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-\(name)-\(UUID().uuidString)", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// Runs a command to its end.
enum Command {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ executable: URL, _ arguments: [String], in folder: URL) throws -> Data {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let output = folder.appending(path: ".out-\(UUID().uuidString)")
        let errors = folder.appending(path: ".err-\(UUID().uuidString)")
        try Data().write(to: output)
        try Data().write(to: errors)
        defer {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: errors)
        }
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: errors)
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try? outputHandle.close()
        try? errorHandle.close()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw Failed(description: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
        return try Data(contentsOf: output)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only where the `openssl` command is (see `OpenSSL`).
    static var openssl: Self { .enabled(if: OpenSSL.enabled, "needs the openssl command: run scripts/test") }
}
