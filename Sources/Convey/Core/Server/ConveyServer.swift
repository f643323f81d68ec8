import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server an app talks to. Subclass it once, point it at a `Remote`, and every task runs
/// against it.
///
/// ```swift
/// final class AppServer: ConveyServer {
///     static let shared = AppServer()
///
///     init() { super.init(remote: .production, asDefault: true) }
///
///     override func headers(for task: any DownloadingTask) async throws -> Headers {
///         ["X-Client": "ios"]
///     }
/// }
/// ```
///
/// Both initializers are designated, so a subclass's own initializer can call either.
@ConveyActor
open class ConveyServer: ConveyServerable {
    /// The server of every task that does not name one: the last server created with
    /// `asDefault: true`. Before any exists, a stand-in with no remote, whose tasks fail with
    /// `ConveyError.noRemote` saying that no default server was made (its `server` is
    /// `ConveyServer.missingDefaultName`).
    public static var `default`: ConveyServer {
        if let current = defaultServer { return current }
        let standIn = standInForMissingDefault()
        defaultServer = standIn
        return standIn
    }
    private static var defaultServer: ConveyServer?

    /// The `name` of the stand-in `default` returns before any server was made with
    /// `asDefault: true`: what `ConveyError.noRemote(server:)` carries when a task ran before
    /// the app made its default server.
    public nonisolated static let missingDefaultName = "ConveyServer.default (none was made)"

    /// A server with no remote that stands in for the default server no one made.
    static func standInForMissingDefault() -> ConveyServer {
        let standIn = ConveyServer(remote: nil)
        standIn.standsInForMissingDefault = true
        return standIn
    }

    /// Whether this server is the stand-in `default` made because no default server existed.
    private var standsInForMissingDefault = false

    /// The environment tasks are sent to. Change it at any time; runs that start afterwards use it.
    public var remote: Remote?
    /// Settings for every task run against this server.
    public final var configuration: ServerConfiguration {
        // Read in place, not copied: tasks read single settings from it on every run.
        _read { yield storedConfiguration }
        _modify {
            let before = TransportSettings(storedConfiguration)
            yield &storedConfiguration
            if TransportSettings(storedConfiguration) != before { standardTransport = nil }
        }
    }
    /// The configuration itself, which the library's own code reads setting by setting: a read
    /// through `configuration` from a generic context (a task's default `decoder`, say) copied
    /// the whole struct, about 40 references retained and released, once per setting read.
    private(set) final var storedConfiguration: ServerConfiguration

    /// The settings the built-in transport is made from: a change to them makes a new one.
    private struct TransportSettings: Equatable {
        let defaultTimeout: Duration
        let waitsForConnectivity: Bool
        let builtInTransport: BuiltInTransport
        let tls: TLSConfiguration
        let proxy: ProxyConfiguration
        let httpVersion: HTTPVersionPreference

        init(_ configuration: ServerConfiguration) {
            defaultTimeout = configuration.defaultTimeout
            waitsForConnectivity = configuration.waitsForConnectivity
            builtInTransport = configuration.builtInTransport
            tls = configuration.tls
            proxy = configuration.proxy
            httpVersion = configuration.httpVersion
        }
    }
    /// When `true`, every task fails at once with `ConveyError.serverDisabled` and nothing is sent.
    public var disabled = false

    /// What carries requests. Default: the configuration's `builtInTransport` (`CurlTransport`
    /// on Linux, `URLSessionTransport` elsewhere). Set a `StubTransport` to answer requests
    /// without a network, or any `ConveyTransport` of your own.
    @_spi(Transport) public var transport: any ConveyTransport {
        get {
            if let customTransport { return customTransport }
            if let standardTransport { return standardTransport }
            let made = configuration.builtInTransport.make(for: configuration)
            standardTransport = made
            return made
        }
        set { customTransport = newValue }
    }
    private var customTransport: (any ConveyTransport)?
    /// Whether requests go through the transport the configuration makes (none was set).
    var usesBuiltInTransport: Bool { customTransport == nil }
    private var standardTransport: (any ConveyTransport)?

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - remote: where tasks are sent; may be set later.
    ///   - configuration: settings for every task.
    ///   - asDefault: make this the server of every task that does not name one.
    public init(remote: Remote? = nil, configuration: ServerConfiguration = .init(), asDefault: Bool = false) {
        self.remote = remote
        storedConfiguration = configuration
        if asDefault { Self.defaultServer = self }
    }

    /// Creates a server with no remote yet, optionally as the default server. A subclass may call
    /// it from its own initializer (`super.init(asDefault: true)`) and set `remote` later.
    public init(asDefault: Bool) {
        self.remote = nil
        storedConfiguration = ServerConfiguration()
        if asDefault { Self.defaultServer = self }
    }

    /// A name for logs and errors. Default: the class name and the remote's name
    /// (`ConveyServer.missingDefaultName` for the stand-in of a default server no one made).
    open var name: String {
        if standsInForMissingDefault, remote == nil { return Self.missingDefaultName }
        let type = String(describing: Swift.type(of: self))
        return remote.map { "\(type) (\($0.name))" } ?? type
    }

    /// Headers for a task, layered over `configuration.defaultHeaders`; a task's own `headers`
    /// start from these. Default: none. Override to add credentials or client information.
    open func headers(for task: any DownloadingTask) async throws -> Headers { [] }

    /// Called when a task gets a 401: refresh the credentials your `headers(for:)` sends (a token,
    /// say) and return `true` to retry the task once with them. Default: `false`, no refresh.
    ///
    /// Runs once for every task that got a 401 meanwhile (single flight); each of those is retried
    /// once. Returning `false` or throwing ends them with their 401 `HTTPError`; a second 401 after a
    /// refresh is final, so a refresh never loops.
    open func refreshCredentials(after error: HTTPError) async throws -> Bool { false }

    /// Shares one credential refresh among the tasks that need it.
    let credentialRefresh = CredentialRefresh()

    /// Called exactly once per task run, whatever it delivers, after the task's `didSucceed(with:)` or `didFail(with:)`.
    ///
    /// `response` is the last HTTP exchange, when one completed (also when its status or
    /// decoding failed); `error` is the failure, or `nil` on success.
    ///
    /// Your override runs on `@ConveyActor`, as the rest of your server does. This default does
    /// nothing and is `nonisolated`, so that a server that does not override it costs its runs
    /// no visit to the actor.
    nonisolated open func didFinish(task: any DownloadingTask, response: ServerResponse<Data>?, error: (any Error)?) async {}
}
