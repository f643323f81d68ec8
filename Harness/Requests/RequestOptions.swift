@_spi(Transport) import Convey
import Foundation

/// A request as the command line describes it: target, path, query, headers, body and echo.
struct RequestOptions: Sendable {
    /// The body the command line asks for.
    enum Body: Sendable {
        case none
        /// `--json-body` or `--data TEXT`: bytes in memory.
        case data(Data, contentType: String)
        /// `--data @FILE`: streamed from disk.
        case file(URL, contentType: String)
        /// `--form` alone.
        case form([String: String])
        /// `--file`, with any `--form` fields.
        case multipart(fields: [String: String], files: [(field: String, file: URL)])
    }

    /// The options describing a request, shared by the method commands and `replay`.
    static let requestOptions: [OptionSpec] = [
        RemoteTarget.option,
        HarnessTransport.option,
    ] + ConnectionOptions.options + [
        OptionSpec(["-H", "--header"], value: "'NAME: VALUE'", help: "add a request header (repeatable; a name given twice is sent with both values, in order)"),
        OptionSpec(["--timeout"], value: "SECONDS", help: "fail an attempt that waits longer than this for data (default 60)"),
        OptionSpec(["--echo"], value: "STYLES", help: "also print Convey's echo to stderr: " + EchoChoice.names + " (comma-separated)"),
    ]

    static let queryOption = OptionSpec(["-q", "--query"], value: "NAME=VALUE",
                                        help: "add a query parameter (repeatable; a name given twice is sent twice, in order)")

    /// The options that build a body.
    static let bodyOptions: [OptionSpec] = [
        OptionSpec(["-j", "--json-body"], value: "JSON", help: "send JSON text as an application/json body"),
        OptionSpec(["-f", "--form"], value: "NAME=VALUE", help: "send a form field: urlencoded, or multipart with --file (repeatable)"),
        OptionSpec(["-F", "--file"], value: "NAME=@PATH", help: "send a file as a multipart/form-data part (repeatable)"),
        OptionSpec(["-d", "--data"], value: "TEXT|@PATH", help: "send text, or a file streamed from disk, as the raw body"),
        OptionSpec(["--content-type"], value: "TYPE", help: "the Content-Type of --data (default text/plain, or application/octet-stream for a file)"),
    ]

    let target: RemoteTarget
    let transport: BuiltInTransport
    /// TLS, proxy and HTTP version (`--cacert`, `-x`, `--http1.1`, …).
    let connection: ConnectionOptions
    let path: String
    /// `-q` items in the order given, repeats kept.
    let query: [URLQueryItem]
    let headers: Headers
    let body: Body
    let echo: TaskEchoStyle
    let timeout: Duration?

    /// Reads the request options of `command` (`get`, `post`, …); `path` is the positional argument.
    init(_ arguments: ParsedArguments, method: HTTPMethod, command: String,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        guard let given = arguments.positionals.first else {
            throw UsageError(message: "\(command) needs a PATH (such as /get) or a full URL", command: command)
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[1])': \(command) takes one PATH", command: command)
        }
        let lowered = given.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let absolute = Self.absoluteURL(given) else {
                throw UsageError(message: "'\(Redaction.standard.maskedText(given))' is not a valid http(s) URL with a host", command: command)
            }
            guard !arguments.has("remote") else {
                throw UsageError(message: "give either a full URL or --remote with a path, not both", command: command)
            }
            target = .remote(absolute.remote)
            path = absolute.path
        } else {
            target = try RemoteTarget.resolve(arguments.value("remote"), environment: environment, command: command)
            path = given
        }
        transport = try HarnessTransport.resolve(arguments.value("transport"), command: command)
        connection = try ConnectionOptions(arguments, command: command)
        query = try Self.pairs(arguments.all("query"), option: "-q", command: command).map { URLQueryItem(name: $0.name, value: $0.value) }
        headers = try Self.headers(arguments.all("header"), command: command)
        body = try Self.body(arguments, command: command)
        if case .none = body {} else if method.forbidsBody {
            throw UsageError(message: "\(method) requests cannot carry a body: use post, put or patch", command: command)
        }
        echo = try EchoChoice.style(arguments.value("echo"), command: command)
        timeout = try arguments.value("timeout").map { text throws(UsageError) in try Self.seconds(text, option: "--timeout", command: command) }
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

    /// A positive, finite number of seconds, at most a day.
    static func seconds(_ text: String, option: String, command: String) throws(UsageError) -> Duration {
        guard let value = Double(text), value.isFinite, value > 0, value <= 86_400 else {
            throw UsageError(message: "\(option): '\(text)' is not a number of seconds between 0 and 86400", command: command)
        }
        return .milliseconds(Int64((value * 1000).rounded(.up)))
    }

    /// `NAME=VALUE` pairs in the order given, repeats kept.
    static func pairs(_ texts: [String], option: String, command: String) throws(UsageError) -> [(name: String, value: String)] {
        try texts.map { text throws(UsageError) in
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw UsageError(message: "\(option): '\(Redaction.standard.maskedText(text))' is not NAME=VALUE", command: command)
            }
            return (String(text[..<equals]), String(text[text.index(after: equals)...]))
        }
    }

    /// `NAME: VALUE` headers in the order given, a name given twice sent with both values: the
    /// name an HTTP token, the value free of line breaks.
    static func headers(_ texts: [String], command: String) throws(UsageError) -> Headers {
        var headers = Headers()
        for text in texts {
            guard let colon = text.firstIndex(of: ":") else {
                throw UsageError(message: "-H: '\(text)' is not NAME: VALUE", command: command)
            }
            let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(tokenCharacters.contains) else {
                throw UsageError(message: "-H: '\(name)' is not a valid header name", command: command)
            }
            guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                throw UsageError(message: "-H: the value of '\(name)' contains a line break", command: command)
            }
            headers.add(Header(name: name, value: value))
        }
        return headers
    }

    private static func body(_ arguments: ParsedArguments, command: String) throws(UsageError) -> Body {
        let json = arguments.value("json-body")
        let data = arguments.value("data")
        // A form field given twice keeps the last value.
        let fields = try pairs(arguments.all("form"), option: "--form", command: command)
            .reduce(into: [String: String]()) { result, pair in result[pair.name] = pair.value }
        let files = try arguments.all("file").map { text throws(UsageError) in try file(text, command: command) }
        let kinds = [json != nil, data != nil, !fields.isEmpty || !files.isEmpty].filter { $0 }.count
        guard kinds <= 1 else {
            throw UsageError(message: "choose one body: --json-body, --data, or --form/--file", command: command)
        }
        if arguments.has("content-type"), data == nil {
            throw UsageError(message: "--content-type applies to --data only", command: command)
        }
        if let json {
            do {
                _ = try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
            } catch {
                throw UsageError(message: "--json-body: not valid JSON: \(json.prefix(80))", command: command)
            }
            return .data(Data(json.utf8), contentType: "application/json")
        }
        if let data {
            if data.hasPrefix("@") {
                let path = String(data.dropFirst())
                guard !path.isEmpty else { throw UsageError(message: "--data: '@' needs a file path", command: command) }
                return .file(URL(filePath: path), contentType: arguments.value("content-type") ?? "application/octet-stream")
            }
            return .data(Data(data.utf8), contentType: arguments.value("content-type") ?? "text/plain; charset=utf-8")
        }
        if !files.isEmpty { return .multipart(fields: fields, files: files) }
        if !fields.isEmpty { return .form(fields) }
        return .none
    }

    private static func file(_ text: String, command: String) throws(UsageError) -> (field: String, file: URL) {
        guard let separator = text.range(of: "=@"), separator.lowerBound != text.startIndex,
              separator.upperBound != text.endIndex else {
            throw UsageError(message: "--file: '\(text)' is not NAME=@PATH", command: command)
        }
        return (String(text[..<separator.lowerBound]), URL(filePath: String(text[separator.upperBound...])))
    }
}
