#if os(Linux) || os(macOS)
import Foundation
import Testing

/// What one run of the built `convey-harness` produced.
struct HarnessRun: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
    /// `false` when the process died from a signal (a crash) instead of exiting.
    let exited: Bool

    var output: String { stdout + stderr }
}

/// Runs the `convey-harness` executable that `swift build` put next to the test bundle.
enum HarnessProcess {
    /// The executable: `CONVEY_HARNESS_EXECUTABLE`, else `convey-harness` in the build folder
    /// holding the test bundle, else in the package's `.build/debug`.
    static let executable: URL? = {
        if let path = ProcessInfo.processInfo.environment["CONVEY_HARNESS_EXECUTABLE"] { return URL(filePath: path) }
        return builtExecutable(named: "convey-harness")
    }()

    /// A product `swift build` put in the build folder holding the test bundle, else in the
    /// package's `.build/debug`.
    static func builtExecutable(named name: String) -> URL? {
        let fileManager = FileManager.default
        var folders: [URL] = []
        if let testBinary = try? fileManager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folders.append(URL(filePath: testBinary).deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        folders.append(packageRoot.appending(path: ".build/debug"))
        return folders.map { $0.appending(path: name) }
            .first { fileManager.isExecutableFile(atPath: $0.path(percentEncoded: false)) }
    }

    /// Runs the harness with `arguments`, its records in `records`, and waits for it to exit.
    ///
    /// - Parameters:
    ///   - interruptAfter: send SIGINT (Ctrl-C) after this long.
    ///   - timeout: terminate the process after this long; the test then fails on its output.
    ///   - input: what the process reads on standard input, whole, then its end; `nil` leaves
    ///     the test's own.
    ///   - holdsInputOpen: standard input a pipe that stays open, never ending, until the process
    ///     exits: for a process that acts on the end of its input (`ws` closes there).
    static func run(_ arguments: [String], records: URL, environment: [String: String] = [:],
                    interruptAfter: Duration? = nil, timeout: Duration = .seconds(60),
                    executable: URL? = executable, input: String? = nil, holdsInputOpen: Bool = false) async throws -> HarnessRun {
        let executable = try #require(executable, "the executable is not built: run `swift build` (scripts/test builds it)")
        let scratch = FileManager.default.temporaryDirectory.appending(path: "convey-harness-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutFile = scratch.appending(path: "stdout")
        let stderrFile = scratch.appending(path: "stderr")
        try Data().write(to: stdoutFile)
        try Data().write(to: stderrFile)
        let stdout = try FileHandle(forWritingTo: stdoutFile)
        let stderr = try FileHandle(forWritingTo: stderrFile)
        defer {
            try? stdout.close()
            try? stderr.close()
        }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        variables["CONVEY_HARNESS_RECORDS"] = records.path(percentEncoded: false)
        variables["CONVEY_REMOTE"] = nil
        variables.merge(environment) { $1 }
        process.environment = variables
        process.standardOutput = stdout
        process.standardError = stderr
        let heldInput = holdsInputOpen ? Pipe() : nil
        defer { try? heldInput?.fileHandleForWriting.close() }
        if let heldInput {
            process.standardInput = heldInput
        } else if let input {
            let inputFile = scratch.appending(path: "stdin")
            try Data(input.utf8).write(to: inputFile)
            process.standardInput = try FileHandle(forReadingFrom: inputFile)
        }
        let running = RunningProcess(process)

        let exited = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        // On a thread of its own: a test pool kept busy by other suites' work would delay a task
        // past the request the interrupt is meant to cancel.
        if let interruptAfter {
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: Double(interruptAfter.components.seconds) + Double(interruptAfter.components.attoseconds) / 1e18)
                running.interrupt()
            }
        }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            running.terminate()
        }
        for await _ in exited {}
        watchdog.cancel()
        process.waitUntilExit()
        return HarnessRun(status: process.terminationStatus,
                          stdout: try String(contentsOf: stdoutFile, encoding: .utf8),
                          stderr: try String(contentsOf: stderrFile, encoding: .utf8),
                          exited: process.terminationReason == .exit)
    }
}

#if canImport(Glibc)
import Glibc

extension HarnessProcess {
    /// Runs the harness with standard output on a pseudo-terminal in raw mode (so that the
    /// harness sees a terminal, and its bytes arrive unchanged) and returns what it wrote there.
    static func runOnTerminal(_ arguments: [String], records: URL) async throws -> String {
        let executable = try #require(executable, "the executable is not built: run `swift build` (scripts/test builds it)")
        // posix_openpt and friends are not visible from Swift: /dev/ptmx with the ioctls they wrap.
        let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(controller >= 0, "no pseudo-terminal")
        var locked: CInt = 0
        var number: CUnsignedInt = 0
        let unlockRequest: UInt = 0x4004_5431  // TIOCSPTLCK
        let numberRequest: UInt = 0x8004_5430  // TIOCGPTN
        try #require(ioctl(controller, unlockRequest, &locked) == 0 && ioctl(controller, numberRequest, &number) == 0)
        let name = "/dev/pts/\(number)"
        let terminal = open(name, O_RDWR | O_NOCTTY)
        try #require(terminal >= 0)
        var settings = termios()
        tcgetattr(terminal, &settings)
        cfmakeraw(&settings)
        tcsetattr(terminal, TCSANOW, &settings)
        defer { close(controller) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        variables["CONVEY_HARNESS_RECORDS"] = records.path(percentEncoded: false)
        variables["CONVEY_REMOTE"] = nil
        process.environment = variables
        process.standardOutput = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Drained while the child runs, so that a full terminal buffer never blocks it, and after.
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        func drain() {
            var ready = pollfd(fd: controller, events: Int16(POLLIN), revents: 0)
            while poll(&ready, 1, 0) > 0, ready.revents & Int16(POLLIN) != 0 {
                let count = read(controller, &buffer, buffer.count)
                guard count > 0 else { return }
                output += buffer[..<count]
            }
        }
        while process.isRunning {
            var ready = pollfd(fd: controller, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 50)
            drain()
        }
        drain()
        close(terminal)
        return String(decoding: output, as: UTF8.self)
    }
}
#endif

/// Lets other tasks signal the process.
private struct RunningProcess: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }

    func interrupt() { if process.isRunning { process.interrupt() } }
    func terminate() { if process.isRunning { process.terminate() } }
}

/// A records folder for one test, removed afterwards.
struct RecordsFolder {
    let url = FileManager.default.temporaryDirectory.appending(path: "convey-harness-records-\(UUID().uuidString)", directoryHint: .isDirectory)

    func remove() { try? FileManager.default.removeItem(at: url) }
}
#endif
