@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// How a request goes out, whatever it asks for: transport, connection, added headers and
/// credentials, redirects, compression, time limits, retries and echo. Shared by the method
/// commands and `replay`.
struct SendingOptions: Sendable {
    static let options: [OptionSpec] = [.remote, .transport] + ConnectionOptions.options + [
        .header, .user, .cookie, .userAgent, .referer, .location, .maxRedirs, .compressed, .timeout, .maxTime,
    ] + RetryOptions.options + [.echo] + HAROptions.options + TelemetryOptions.options

    let transport: BuiltInTransport
    /// TLS, proxy, HTTP version and connect timeout (`--cacert`, `-x`, `--http1.1`, …).
    let connection: ConnectionOptions
    /// `-H`, then `-A`, `-e`, `-u` and `-b`: credentials among them are masked wherever shown.
    let headers: Headers
    /// Names that `-H 'NAME:'` takes out of the request, as curl does with its own headers.
    let removedHeaders: [String]
    let echo: TaskEchoStyle
    /// `--timeout`: the attempt (idle) timeout.
    let timeout: Duration?
    /// `--max-time`: the whole run's limit.
    let maxTime: Duration?
    /// `-L`: without it a redirect is the response.
    let followsRedirects: Bool
    /// `--max-redirs`.
    let maximumRedirects: Int?
    let retry: RetryOptions?
    /// `--compressed`: ask for a compressed response; without it, `Accept-Encoding: identity`.
    let compressed: Bool
    /// Said on stderr (unless `-s`) and in `--output-json`'s `warnings`.
    let warnings: [String]
    /// `--fixtures` and `--record-har`: the HAR files the request is answered from and kept in.
    let har: HAROptions
    /// `--spans`, `--traceparent`, `--otlp` and `--metrics`: the runs traced and measured, their spans and metrics shown or exported.
    let telemetry: TelemetryOptions

    /// Reads the options; `target` is the URL the request goes to first, when known.
    init(_ arguments: ParsedArguments, target: URL?, command: String,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        har = try HAROptions(arguments, command: command)
        telemetry = try TelemetryOptions(arguments, command: command)
        transport = try HarnessTransport.resolve(arguments.value(.transport), environment: environment, command: command)
        connection = try ConnectionOptions(arguments, target: target, command: command, environment: environment)
        var warnings: [String] = []
        if connection.connectTimeout != nil, transport != .curl || !transport.isAvailable {
            warnings.append("--connect-timeout applies to the curl transport only: URLSession has no connect timeout")
        }
        let given = try Self.headers(arguments.all(.header), command: command)
        var headers = given.headers
        var removedHeaders = given.removed
        if let agent = arguments.value(.userAgent) {
            if agent.isEmpty { removedHeaders.append("User-Agent") } else { headers.append(try Self.field("User-Agent", agent, option: "-A", command: command)) }
        }
        if let referer = arguments.value(.referer) { headers.append(try Self.field("Referer", referer, option: "-e", command: command)) }
        if let user = arguments.value(.user), !headers.contains(named: "Authorization") {
            // The value is a credential: no error repeats it.
            guard user.contains(":") else {
                throw UsageError(message: "-u: expected USER:PASSWORD (the harness does not ask for a password)", command: command)
            }
            guard !user.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw UsageError(message: "-u: the user or password contains a control character", command: command)
            }
            headers.append(Header(name: "Authorization", value: "Basic " + Data(user.utf8).base64EncodedString()))
        }
        let cookies = CookieOption.header(arguments.all(.cookie), for: target)
        if let cookie = cookies.value {
            guard !cookie.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw UsageError(message: "-b: a cookie contains a control character", command: command)
            }
            headers.add(Header(name: "Cookie", value: cookie))
        }
        warnings += cookies.warnings
        self.headers = headers
        self.removedHeaders = removedHeaders
        self.warnings = warnings + telemetry.warnings
        echo = try EchoChoice.style(arguments.value(.echo), command: command)
        timeout = try arguments.value(.timeout).map { text throws(UsageError) in try RequestOptions.seconds(text, option: "--timeout", command: command) }
        maxTime = try arguments.value(.maxTime).map { text throws(UsageError) in try RequestOptions.seconds(text, option: "--max-time", command: command) }
        followsRedirects = arguments.has(.location)
        maximumRedirects = try arguments.value(.maxRedirs).map { text throws(UsageError) in
            guard let count = Int(text), count >= -1 else {
                throw UsageError(message: "--max-redirs: '\(text)' is not a number of redirects (-1 for no limit)", command: command)
            }
            return count == -1 ? Int.max : count
        }
        retry = try RetryOptions(arguments, command: command)
        compressed = arguments.has(.compressed)
    }

    /// `-H` arguments, as curl takes them: `NAME: VALUE` adds a field (a name given twice is sent
    /// with both values, in order), `NAME;` one with an empty value, `NAME:` alone removes a field
    /// Convey would send. The name must be an HTTP token, the value free of line breaks. A bad
    /// argument is not repeated in the error: it may hold a credential.
    static func headers(_ texts: [String], command: String) throws(UsageError) -> (headers: Headers, removed: [String]) {
        var headers = Headers()
        var removed: [String] = []
        for text in texts {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.hasSuffix(";"), !trimmed.contains(":") {
                headers.add(try field(String(trimmed.dropLast()), "", option: "-H", command: command))
                continue
            }
            guard let colon = text.firstIndex(of: ":") else {
                throw UsageError(message: "-H: expected 'NAME: VALUE', got text without a ':' (not repeated here: it may hold a credential)", command: command)
            }
            let name = String(text[..<colon])
            let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            if value.isEmpty {
                _ = try field(name, "", option: "-H", command: command)
                removed.append(name.trimmingCharacters(in: .whitespaces))
            } else {
                headers.add(try field(name, value, option: "-H", command: command))
            }
        }
        return (headers, removed)
    }

    /// A header field, checked: the name an HTTP token, the value free of line breaks.
    private static func field(_ name: String, _ value: String, option: String, command: String) throws(UsageError) -> Header {
        let name = name.trimmingCharacters(in: .whitespaces)
        let tokenCharacters = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(tokenCharacters.contains) else {
            throw UsageError(message: "\(option): '\(DisplayFormat.terminalSafe(name))' is not a valid header name", command: command)
        }
        guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw UsageError(message: "\(option): the value of '\(name)' contains a line break", command: command)
        }
        return Header(name: name, value: value)
    }

    /// Sets what the server's configuration holds: redirect limit, compression, TLS, proxy, HTTP version.
    func apply(to configuration: inout ServerConfiguration) {
        if let maximumRedirects { configuration.maximumRedirects = maximumRedirects }
        configuration.enableGZipDownloads = compressed
        connection.apply(to: &configuration)
    }
}

extension OptionSpec {
    static let header = OptionSpec(["-H", "--header"], value: "'NAME: VALUE'",
                                   curl: .differs("no @FILE; a name given twice is sent twice, in order"),
                                   help: "add a request header; 'NAME:' removes one Convey sends, 'NAME;' sends it empty (repeatable)")
    static let user = OptionSpec(["-u", "--user"], value: "USER:PASSWORD", curl: .differs("never asks for a password: give USER:PASSWORD"),
                                 help: "send Basic credentials (never printed; -H 'Authorization: …' wins)")
    static let cookie = OptionSpec(["-b", "--cookie"], value: "DATA|FILE", curl: .differs("a FILE is read in Netscape format only"),
                                   help: "send cookies: 'NAME=VALUE; …', or those of a Netscape cookie file for this URL (never printed)")
    static let userAgent = OptionSpec(["-A", "--user-agent"], value: "NAME", curl: .same, help: "send this User-Agent ('' sends none)")
    static let referer = OptionSpec(["-e", "--referer"], value: "URL", curl: .differs("no ';auto'"), help: "send this Referer")
    static let location = OptionSpec(["-L", "--location"], curl: .same,
                                     help: "follow redirects (without it a redirect is the response, printed with its Location)")
    static let maxRedirs = OptionSpec(["--max-redirs"], value: "NUM", curl: .differs("too many fails with exit code 4, not 47"),
                                      help: "with -L: follow at most NUM redirects (default 20; -1 for no limit)")
    static let compressed = OptionSpec(["--compressed"],
                                       curl: .differs("without it the request says Accept-Encoding: identity (and URLSession decodes a compressed answer all the same); -o FILE asks for it unencoded"),
                                       help: "ask for a compressed response (gzip, deflate) and decode it")
    static let timeout = OptionSpec(["--timeout"], value: "SECONDS", curl: .harnessOnly("-y/--speed-time with -Y/--speed-limit 1"),
                                    help: "fail an attempt that waits longer than this for data (default 60)")
    static let maxTime = OptionSpec(["-m", "--max-time"], value: "SECONDS",
                                    curl: .differs("limits the whole run, retries included (curl's limits each attempt); fails with exit code 4, not 28"),
                                    help: "fail the request when it takes longer than this in all")
    static let echo = OptionSpec(["--echo"], value: "STYLES", curl: .harnessOnly("--trace-ascii"),
                                 help: "also print Convey's echo to stderr: " + EchoChoice.names + " (comma-separated)")
}
