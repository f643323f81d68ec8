#if os(Linux) || os(macOS)
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `ConveyFreshProcess` (Tests/FreshProcess), the program tests run in a process of their
/// own, with its standard output into a pipe, and returns what came through the pipe.
enum FreshProcess {
    static func output(_ mode: String) async throws -> String {
        let executable = try #require(HarnessProcess.builtExecutable(named: "ConveyFreshProcess"),
                                      "ConveyFreshProcess is not built: run `swift build` (scripts/test builds it)")
        let process = Process()
        process.executableURL = executable
        process.arguments = [mode]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let exited = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        // Waited for without blocking a thread of the test's pool; the child writes a few lines,
        // which the pipe holds whole until it is read.
        for await _ in exited {}
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(mode) exited with \(process.terminationStatus)")
        return String(decoding: drain(pipe.fileHandleForReading.fileDescriptor), as: UTF8.self)
    }

    /// What the pipe holds, read without waiting for an end of file that another process
    /// holding the write end (one spawned meanwhile by another test) would delay.
    private static func drain(_ descriptor: Int32) -> [UInt8] {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                bytes += buffer[..<count]
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return bytes
            }
        }
    }
}
#endif
