@_spi(Transport) import Convey
import Foundation

/// `demo`: every kind of task, each with what went on the wire, what the hooks saw and the result.
enum DemoCommand {
    static let command = Command(
        name: "demo",
        synopsis: "demo [STEP…] [options]",
        summary: "Runs every kind of Convey task and shows, for each, what went on the wire, what each hook saw and the result.",
        details: """
            With no --remote it needs no network and no server: tasks run against an embedded,
            in-process httpbin behind Convey's transport seam (a StubTransport). --remote runs the
            same tasks against a real httpbin. Steps whose feature has not landed in Convey say
            "not available yet". STEP numbers (see --list) run only those steps.

            Records go to a temporary folder removed at the end, unless --records names one.
            """,
        options: [.remote, .list],
        run: { arguments, settings in await run(arguments, settings) })

    @ConveyActor
    private static func run(_ arguments: ParsedArguments, _ settings: HarnessSettings) async -> ExitCode {
        let console = settings.console
        let steps = DemoSteps.all
        if arguments.has(.list) {
            for (index, step) in steps.enumerated() { console.out(String(format: "%2d  ", index + 1) + step.title) }
            return .ok
        }
        let target: RemoteTarget
        let transport: BuiltInTransport
        var selected: [Int] = []
        do throws(UsageError) {
            target = try RemoteTarget.resolve(arguments.value(.remote), environment: [:], command: "demo")
            transport = try HarnessTransport.resolve(nil, environment: ProcessInfo.processInfo.environment, command: "demo")
            for text in arguments.positionals {
                guard let number = Int(text), (1...steps.count).contains(number) else {
                    throw UsageError(message: "'\(text)' is not a step number from 1 to \(steps.count) (see demo --list)", command: "demo")
                }
                selected.append(number)
            }
        } catch {
            return console.report(error)
        }
        let temporaryFolder = settings.recordsFolderChosen ? nil
            : FileManager.default.temporaryDirectory.appending(path: "convey-harness-demo-\(UUID().uuidString)", directoryHint: .isDirectory)
        defer { if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) } }
        let recorder = settings.records ? TaskRecorder(folder: temporaryFolder ?? settings.recordsFolder) : nil
        let context = DemoContext(target: target, transport: transport, recorder: recorder, settings: settings)

        console.out(console.styled("Convey \(conveyVersion) harness demo", .bold) + " against \(target.description)")
        let printer = DemoPrinter(console: console)
        var tally: [String: Int] = [:]
        let chosen = selected.isEmpty ? Array(1...steps.count) : selected
        for number in chosen {
            guard !Task.isCancelled else { break }
            let step = steps[number - 1]
            printer.heading(step, number: number, of: steps.count)
            let outcome = await step.run(context)
            printer.details(wire: context.wire.drain(), hooks: context.hooks.drain())
            printer.result(outcome)
            tally[outcome.kind, default: 0] += 1
        }
        await recorder?.flush()
        if Task.isCancelled {
            console.err(console.styledError("Demo interrupted.", .yellow))
            return .interrupted
        }
        let misbehaved = tally["misbehaved"] ?? 0
        console.out()
        console.out(console.styled("\(chosen.count) steps: \(tally["behaved"] ?? 0) behaved as expected, "
                                   + "\(tally["notAvailableYet"] ?? 0) not available yet, \(misbehaved) misbehaved.",
                                   misbehaved == 0 ? .bold : .boldRed))
        return misbehaved == 0 ? .ok : .localFailure
    }
}

extension DemoStep.Outcome {
    /// The outcome's name, for the tally.
    var kind: String {
        switch self {
        case .behaved: "behaved"
        case .notAvailableYet: "notAvailableYet"
        case .misbehaved: "misbehaved"
        }
    }
}

extension OptionSpec {
    static let list = OptionSpec(["--list"], curl: .harnessOnly, help: "list the steps and exit")
}
