@_spi(Transport) import Convey
import Foundation

/// Where requests go: the embedded in-process server, or a real one.
enum RemoteTarget: Sendable {
    /// The in-process httpbin look-alike behind a `StubTransport`: no network at all.
    case embedded
    /// A real server.
    case remote(Remote)

    /// The target for `--remote`, else `CONVEY_REMOTE`, else the embedded server.
    static func resolve(_ text: String?, environment: [String: String], command: String) throws(UsageError) -> RemoteTarget {
        guard let text = text ?? environment["CONVEY_REMOTE"].flatMap({ $0.isEmpty ? nil : $0 }) else { return .embedded }
        if text == "embedded" { return .embedded }
        guard let remote = Remote(name: "remote", string: text) else {
            throw UsageError(message: "--remote: '\(text)' is not an absolute http(s) URL such as http://127.0.0.1:8080", command: command)
        }
        return .remote(remote)
    }

    /// The target for a recorded origin: the embedded server for its own `.invalid` host.
    init(origin: Remote) {
        self = origin.url.host() == EmbeddedHTTPBin.remote.url.host() ? .embedded : .remote(origin)
    }

    /// The remote tasks are built against.
    var remote: Remote {
        switch self {
        case .embedded: EmbeddedHTTPBin.remote
        case .remote(let remote): remote
        }
    }

    /// For headings: "embedded in-process server (no network)" or the URL.
    var description: String {
        switch self {
        case .embedded: "the embedded in-process server (no network)"
        case .remote(let remote): remote.urlString(forPath: "")
        }
    }

    /// The command-line arguments that choose this target again, for a child process.
    var arguments: [String] {
        switch self {
        case .embedded: ["--remote", "embedded"]
        case .remote(let remote): ["--remote", remote.urlString(forPath: "")]
        }
    }
}

extension OptionSpec {
    static let remote = OptionSpec(["--remote"], value: "URL", curl: .harnessOnly,
                                   help: "the server PATH goes to (default: $CONVEY_REMOTE, else the embedded in-process server)")
}
