import Foundation

/// Runs this executable again with other arguments, for launch-argument demos.
enum ChildProcess {
    /// This process's executable: `/proc/self/exe` on Linux, else the bundle's or `argv[0]`.
    static var executable: URL? {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return URL(filePath: path) }
        #endif
        if let url = Bundle.main.executableURL { return url }
        guard let first = CommandLine.arguments.first, first.contains("/") else { return nil }
        return URL(filePath: first, relativeTo: URL(filePath: FileManager.default.currentDirectoryPath, directoryHint: .isDirectory))
    }

    /// Runs the executable to the end; standard output and error together, in order.
    /// Cancelling the calling task terminates the child.
    static func run(_ arguments: [String]) async throws(LocalFailure) -> (status: Int32, output: String) {
        #if os(Linux) || os(macOS)
        guard let executable else { throw LocalFailure(message: "cannot find this program's executable") }
        let outputFile = FileManager.default.temporaryDirectory.appending(path: "convey-harness-child-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        do {
            try Data().write(to: outputFile)
            let handle = try FileHandle(forWritingTo: outputFile)
            defer { try? handle.close() }
            process.standardOutput = handle
            process.standardError = handle
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    process.terminationHandler = { _ in continuation.resume() }
                    do {
                        try process.run()
                    } catch {
                        process.terminationHandler = nil
                        continuation.resume(throwing: error)
                    }
                }
            } onCancel: { [running = RunningProcess(process)] in
                running.process.terminate()
            }
        } catch {
            throw LocalFailure(message: "\(executable.path(percentEncoded: false)): \(error.localizedDescription)")
        }
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        return (process.terminationStatus, output)
        #else
        throw LocalFailure(message: "child processes are not available on this platform")
        #endif
    }
}

#if os(Linux) || os(macOS)
/// Lets the cancellation handler, which may run on any thread, terminate the child.
private struct RunningProcess: @unchecked Sendable {  // guarded by: nothing to guard: only `terminate()` is called across threads, and Process makes that thread-safe
    let process: Process
    init(_ process: Process) { self.process = process }
}
#endif
