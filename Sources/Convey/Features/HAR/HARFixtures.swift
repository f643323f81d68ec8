import Foundation

/// Exchanges kept in a HAR 1.2 file, answering Convey's requests in place of the network: a
/// capture from a browser's developer tools, mitmproxy or Charles, or one Convey wrote. The whole
/// pipeline runs as usual (hooks, status rules, decoding, retries, cache, echo), so tests of an
/// app's real code run offline against real traffic.
///
/// ```swift
/// let fixtures = try HARFixtures(file: URL(filePath: "Fixtures/users.har"))
/// let user = try await fixtures.scope { try await FetchUser(id: 42).download() }
/// ```
///
/// Matching, in file order: the method, the URL (query parameters in any order, a masked value
/// standing for any value), and, where several entries share those but not their bodies, the
/// body. Entries for one request answer in turn (a 503, then a 200), each once. A request no
/// entry answers (or whose entries have all answered) fails with `ConveyError.noRecordedAnswer`,
/// naming it; in `passThrough`, `record` and `capture` modes it goes to the network instead (`Mode`).
///
/// What record and capture modes write is masked by `redaction` (the one rule echo and records
/// use) unless `includingSecrets` asks to keep credentials, which the file's `comment` then says.
/// Docs/fixtures.md has the rules, the modes and what of HAR is read.
public final class HARFixtures: Sendable {
    /// The HAR file.
    public let file: URL
    /// What happens to a request the file does not answer.
    public let mode: Mode
    /// The rule that masks what record and capture modes write.
    public let redaction: Redaction
    /// Whether record and capture modes write credentials as they are.
    public let includesSecrets: Bool

    let store: HARFixtureStore
    /// How many entries of the file can never answer (not http(s), or a cancelled exchange).
    let skippedEntryCount: Int

    /// Reads `file` for `mode`.
    ///
    /// - Parameters:
    ///   - file: the HAR file. In `replay` and `passThrough` modes it must exist; in `record` and
    ///     `capture` modes it is created on the first exchange when missing.
    ///   - mode: `replay` (the default) answers from the file only.
    ///   - redaction: what to mask in what is written. Default: `Redaction.standard`; give your
    ///     server's `configuration.redaction` when it hides more.
    ///   - includingSecrets: keep credentials in what is written. Only for files that never leave
    ///     your machine; the file's `comment` says it holds credentials.
    /// - Throws: `ConveyError.harFileUnusable` when the file cannot be read or is not HAR.
    public init(file: URL, mode: Mode = .replay, redaction: Redaction = .standard, includingSecrets: Bool = false) throws(ConveyError) {
        self.file = file
        self.mode = mode
        self.redaction = redaction
        includesSecrets = includingSecrets
        let path = file.path(percentEncoded: false)
        let read: (fixtures: [HARFixture], skipped: Int)?
        do throws(HARError) {
            read = try HARFixtureReader.read(path: path)
        } catch {
            throw error.conveyError
        }
        if read == nil, mode == .replay || mode == .passThrough {
            throw HARError.unreadableFile(path: path, reason: "there is no such file").conveyError
        }
        store = HARFixtureStore(read?.fixtures ?? [])
        skippedEntryCount = read?.skipped ?? 0
    }

    /// Runs `operation` with every exchange of every task run started inside it, on any server,
    /// going through these fixtures: a request the file answers is answered where the cache would
    /// answer it, and nothing below runs for it (the app's exchange interceptors see only what
    /// reaches the network); what the mode sends to the network goes through the server's own
    /// steps and transport, and capture keeps it as it went out. The scope is a task-local value:
    /// tests running in parallel each see only their own fixtures. A scope inside another answers
    /// first: the outer one is its network.
    public func scope<Result>(isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> Result) async rethrows -> Result {
        try await Self.$current.withValue(Self.current + [self], operation: operation, isolation: isolation)
    }

    /// The fixtures of the scopes the current task runs in, outermost first: read once when a run is planned.
    @TaskLocal static var current: [HARFixtures] = []

    /// Gone: fixtures answer through `scope(_:)`, inside the pipeline, where they see each
    /// exchange's task and attempt.
    @_spi(Transport)
    @available(*, unavailable, message: "wrap the runs in fixtures.scope { … } instead: fixtures answer inside the pipeline now")
    public func transport(over network: any ConveyTransport) -> any ConveyTransport {
        network
    }

    /// `METHOD URL` of each entry that has not answered a request yet, in file order: for a test
    /// that checks every fixture was used.
    public var unansweredEntries: [String] {
        store.unansweredEntries.map(Redaction.standard.maskedText)
    }

    /// How record and capture modes mask what they write.
    var privacy: HARPrivacy {
        HARPrivacy(redaction: includesSecrets ? nil : redaction)
    }
}
