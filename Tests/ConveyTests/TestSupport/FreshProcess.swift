#if os(Linux) || os(macOS)
import Foundation
import Testing

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
        try process.run()
        // Read to the end (the child's exit closes the pipe) before waiting, so a full pipe never blocks it.
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(mode) exited with \(process.terminationStatus)")
        return String(decoding: output, as: UTF8.self)
    }
}
#endif
