import Convey
import Foundation
import Testing

/// A Swift Testing trait that answers the Convey requests of a test (or of each test of a suite)
/// from a HAR file: `.harFixtures("Fixtures/users.har")`.
///
/// Each test case gets its own `HARFixtures`, read when it starts, scoped to it with a task-local
/// value (`HARFixtures.scope(_:)`): its repeated entries answer in turn from the first, and tests
/// running in parallel never see each other's fixtures or share their order. What the mode sends
/// to the network goes through the server's own transport.
///
/// `CONVEY_HAR_MODE` (`replay`, `passThrough`, `record`, `capture`) overrides every trait's mode
/// for a run: `CONVEY_HAR_MODE=record swift test` records what the fixtures lack.
public struct HARFixtureTrait: TestTrait, SuiteTrait, TestScoping {
    /// The HAR file: absolute, or relative to the folder of the test's source file.
    public let file: URL
    /// The mode, unless `CONVEY_HAR_MODE` says otherwise.
    public let mode: HARFixtures.Mode
    /// What record and capture modes mask in what they write.
    public let redaction: Redaction
    /// Whether record and capture modes keep credentials in what they write.
    public let includesSecrets: Bool

    /// Applies to every test of a suite, each with fixtures of its own.
    public var isRecursive: Bool { true }

    /// Creates the trait; `.harFixtures(_:mode:)` is the usual spelling.
    public init(file: URL, mode: HARFixtures.Mode, redaction: Redaction = .standard, includingSecrets: Bool = false) {
        self.file = file
        self.mode = mode
        self.redaction = redaction
        includesSecrets = includingSecrets
    }

    /// Runs the test case with its own fixtures in scope.
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let fixtures = try HARFixtures(file: file, mode: try Self.mode(default: mode), redaction: redaction, includingSecrets: includesSecrets)
        try await fixtures.scope { try await function() }
    }

    /// The environment variable that overrides every trait's mode.
    public static let modeVariable = "CONVEY_HAR_MODE"

    /// The mode `CONVEY_HAR_MODE` names, else `mode`; a name that is not a mode fails the test.
    static func mode(default mode: HARFixtures.Mode, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HARFixtures.Mode {
        guard let text = environment[modeVariable], !text.isEmpty else { return mode }
        guard let chosen = HARFixtures.Mode.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            throw HARModeError(text: text)
        }
        return chosen
    }
}

/// `CONVEY_HAR_MODE` names no mode.
struct HARModeError: Error, CustomStringConvertible {
    let text: String

    var description: String {
        "\(HARFixtureTrait.modeVariable)=\(text) is not one of " + HARFixtures.Mode.allCases.map(\.rawValue).joined(separator: ", ")
    }
}

extension Trait where Self == HARFixtureTrait {
    /// Answers the test's Convey requests from the HAR file at `path` (relative to the folder of
    /// the test's source file, or absolute), in `mode`.
    ///
    /// ```swift
    /// @Test(.harFixtures("Fixtures/profile.har"))
    /// func profileLoads() async throws { … }
    /// ```
    public static func harFixtures(_ path: String, mode: HARFixtures.Mode = .replay, redaction: Redaction = .standard,
                                   includingSecrets: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let folder = URL(filePath: sourceLocation.filePath).deletingLastPathComponent()
        let file = (path.hasPrefix("/") ? URL(filePath: path) : folder.appending(path: path)).standardizedFileURL
        return HARFixtureTrait(file: file, mode: mode, redaction: redaction, includingSecrets: includingSecrets)
    }
}
