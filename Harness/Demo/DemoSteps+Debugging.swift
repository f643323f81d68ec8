@_spi(Transport) @_spi(Tools) import Convey
import Foundation

extension DemoSteps {
    static let failAllRequests = DemoStep(
        title: "-fail-all-requests",
        explanation: "Convey reads this launch argument at startup: every task fails at once and nothing is sent. The harness runs itself with it."
    ) { context in
        var arguments = ["get", "/get", "--echo", "minimum", "--color", "never", "-fail-all-requests"] + context.target.arguments
        if let recorder = context.recorder {
            arguments += ["--records", recorder.folder.path(percentEncoded: false)]
        } else {
            arguments.append("--no-record")
        }
        do throws(LocalFailure) {
            let child = try await ChildProcess.run(arguments)
            context.wire.write("$ convey-harness " + arguments.joined(separator: " ") + "\n" + child.output.trimmingCharacters(in: .newlines))
            return child.status == ExitCode.noResponse.rawValue && child.output.contains("-fail-all-requests is set")
                ? .behaved("the child process exited with \(child.status): ConveyError.requestsDisabledForDebugging, nothing was sent")
                : .misbehaved("the child process exited with \(child.status)")
        } catch {
            return .misbehaved("could not run the harness as a child process: \(error.message)")
        }
    }

    static let recording = DemoStep(
        title: "Task recording",
        explanation: "Every attempt above had the .recorded echo style; the server's TaskRecorder wrote one JSON file each,"
            + " credentials masked and, by default, without bodies."
    ) { context in
        guard let recorder = context.recorder else {
            return .behaved("recording is off (--no-record): nothing was written")
        }
        await recorder.flush()
        let records = await recorder.records()
        let folder = recorder.folder
        let texts = records.map(\.id).compactMap { try? String(contentsOf: folder.appending(path: $0 + ".json"), encoding: .utf8) }
        for record in records.reversed() {
            context.wire.write("\(record.attempt > 1 ? "  attempt \(record.attempt) " : "")\(record.method) \(record.url ?? "(no request)") → "
                               + (record.statusCode.map(String.init) ?? record.outcome.rawValue) + " · " + record.taskName)
        }
        guard !records.isEmpty else { return .misbehaved("no records in \(folder.path(percentEncoded: false))") }
        guard !texts.contains(where: { $0.contains(secret) }) else { return .misbehaved("a record holds the password sent in the JSON upload") }
        return .behaved("\(records.count) records in \(folder.path(percentEncoded: false)) (removed after the demo unless --records names a folder);"
                        + " none holds the password sent in the JSON upload")
    }
}
