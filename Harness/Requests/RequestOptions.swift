@_spi(Transport) import Convey
import Foundation

/// A request as a method command's line describes it: target, method, path, query and body,
/// and how it is sent (`SendingOptions`).
struct RequestOptions: Sendable {
    /// The options that say what to ask for: only the method commands take them (`replay` sends what was recorded).
    static let definingOptions: [OptionSpec] = [.urlQuery, .head] + BodyOptions.options

    let target: RemoteTarget
    /// The command's method, or HEAD with `-I`.
    let method: HTTPMethod
    let path: String
    /// `--url-query` items in the order given, repeats kept.
    let query: [URLQueryItem]
    let body: BodyOptions
    let sending: SendingOptions

    /// The request options of `command` (`get`, `post`, …), one for each PATH or URL given, in
    /// order: curl's several URLs in one invocation, each sent with the same options. The body
    /// is read once (`-d @-` reads standard input once) and sent with each.
    static func all(_ arguments: ParsedArguments, method: HTTPMethod, command: String,
                    environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) -> [RequestOptions] {
        guard !arguments.positionals.isEmpty else {
            throw UsageError(message: "\(command) needs a PATH (such as /get) or a full URL", command: command)
        }
        let body = try BodyOptions(arguments, command: command)
        return try arguments.positionals.map { given throws(UsageError) in
            try RequestOptions(arguments, path: given, body: body, method: method, command: command, environment: environment)
        }
    }

    /// Reads the request options of `command` (`get`, `post`, …) for the PATH or URL `given`, with `body`.
    init(_ arguments: ParsedArguments, path given: String, body: BodyOptions, method commandMethod: HTTPMethod, command: String,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        let lowered = given.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let absolute = Self.absoluteURL(given) else {
                throw UsageError(message: "'\(Redaction.standard.maskedText(given))' is not a valid http(s) URL with a host", command: command)
            }
            guard !arguments.has(.remote) else {
                throw UsageError(message: "give either a full URL or --remote with a path, not both", command: command)
            }
            target = .remote(absolute.remote)
            path = absolute.path
        } else {
            target = try RemoteTarget.resolve(arguments.value(.remote), environment: environment, command: command)
            path = given
        }
        if arguments.has(.head) {
            guard commandMethod == .get else {
                throw UsageError(message: "-I sends a HEAD request: use it with get, not \(command)", command: command)
            }
            method = .head
        } else {
            method = commandMethod
        }
        query = try Self.pairs(arguments.all(.urlQuery), option: "--url-query", command: command).map { URLQueryItem(name: $0.name, value: $0.value) }
        self.body = body
        if !body.isEmpty, method.forbidsBody {
            throw UsageError(message: "\(method) requests cannot carry a body: use post, put or patch", command: command)
        }
        let firstURL = URL(string: target.remote.urlString(forPath: path))
        sending = try SendingOptions(arguments, target: firstURL, command: command, environment: environment)
    }

    /// `http://user:pass@host:port/a/b?c=d` as a remote (scheme, userinfo, host and port) and a
    /// path with its query. Convey sends userinfo as `Authorization: Basic`.
    static func absoluteURL(_ text: String) -> (remote: Remote, path: String)? {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"),
              let components = URLComponents(string: text), let scheme = components.scheme, let host = components.host, !host.isEmpty
        else { return nil }
        var origin = URLComponents()
        origin.scheme = scheme
        origin.percentEncodedUser = components.percentEncodedUser
        origin.percentEncodedPassword = components.percentEncodedPassword
        origin.percentEncodedHost = components.percentEncodedHost
        origin.port = components.port
        guard let originURL = origin.url else { return nil }
        var path = components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return (Remote(name: "remote", url: originURL), path)
    }

    /// A positive (or with `allowingZero`, non-negative) finite number of seconds, at most a day.
    static func seconds(_ text: String, option: String, command: String, allowingZero: Bool = false) throws(UsageError) -> Duration {
        guard let value = Double(text), value.isFinite, value > 0 || (allowingZero && value == 0), value <= 86_400 else {
            throw UsageError(message: "\(option): '\(text)' is not a number of seconds between 0 and 86400", command: command)
        }
        return .milliseconds(Int64((value * 1000).rounded(.up)))
    }

    /// `NAME=VALUE` pairs in the order given, repeats kept. A bad one is not repeated in the
    /// error: a query may carry a credential.
    static func pairs(_ texts: [String], option: String, command: String) throws(UsageError) -> [(name: String, value: String)] {
        try texts.map { text throws(UsageError) in
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw UsageError(message: "\(option): expected NAME=VALUE", command: command)
            }
            return (String(text[..<equals]), String(text[text.index(after: equals)...]))
        }
    }
}

extension OptionSpec {
    static let urlQuery = OptionSpec(["--url-query"], value: "NAME=VALUE", curl: .differs("NAME=VALUE only: both are percent-encoded by Convey"),
                                     help: "add a query parameter (repeatable; a name given twice is sent twice, in order)")
    static let head = OptionSpec(["-I", "--head"], curl: .same, help: "send HEAD instead of GET: the status line and headers, no body")
}
