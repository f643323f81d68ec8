@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `ws URL`: a WebSocket from the command line, like websocat. Each line of standard input goes
/// out as a text message (hex as a binary one with `--binary`); each text message that comes in
/// is printed on standard output, one per line, and nothing else is; the handshake, status and
/// errors go to standard error. At the end of input it closes with 1000 and waits for the server's close.
enum WebSocketCommand {
    static let command = Command(
        name: "ws",
        synopsis: "ws URL [options]",
        summary: "Opens a WebSocket: standard input's lines go out as messages, the messages that come in are printed.",
        details: """
            URL is ws:// or wss:// (http:// and https:// are taken as the same). Each line read from
            standard input is sent as one text message; at the end of input the harness closes with
            1000, waits for the server's close, and exits 0. Each text message received is printed
            on standard output, one per line, and nothing else goes there: the handshake, the close
            and errors go to standard error. Ctrl-C closes with 1001 and exits 130.

            --binary: each input line is hex, sent as one binary message; binary messages received
            are printed as hex (without it, a binary message is only noted on standard error).
            --output-json: standard output gets one JSON object per line per event instead:
              {"event":"open","protocol":"chat"|null,"extensions":["permessage-deflate; …"]}
              {"event":"message","type":"text","data":"…"}
              {"event":"message","type":"binary","hex":"…"}
              {"event":"close","code":1000,"reason":"…","by":"server"|"client"}
              {"event":"error","kind":"…","detail":"…"}

            Exit codes: 0 after a close handshake, whatever code the server sent; 2 or 3 for a 4xx
            or 5xx answer to the handshake; 4 when the connection failed, or when the client closed
            it for a protocol error (the close event then says "by":"client" and the code it sent).

            Examples:
              echo hello | convey-harness ws ws://127.0.0.1:8765/echo
              convey-harness ws wss://example.com/socket -H 'Authorization: Bearer …' --ping-interval 30
            """,
        options: [.header, .transport, .binary, .outputJSON, .subprotocol, .maxMessageSize, .noCompression, .pingInterval, .timeout]
            + ConnectionOptions.options,
        run: { arguments, settings in
            let options: WebSocketOptions
            do throws(UsageError) {
                options = try WebSocketOptions(arguments)
            } catch {
                return settings.console.report(error)
            }
            return await WebSocketRunner.run(options, console: settings.console)
        })
}

/// What `ws` was asked for.
struct WebSocketOptions: Sendable {
    /// The remote (the URL's scheme, host and port as http or https) and the path and query under it.
    let remote: Remote
    let path: String
    let query: [URLQueryItem]
    let headers: Headers
    let removedHeaders: [String]
    let transport: BuiltInTransport
    let connection: ConnectionOptions
    let binary: Bool
    let json: Bool
    let subprotocols: [String]
    let maximumMessageSize: Int
    let offersCompression: Bool
    let pingInterval: Duration?
    let idleTimeout: Duration?

    init(_ arguments: ParsedArguments, environment: [String: String] = ProcessInfo.processInfo.environment) throws(UsageError) {
        let command = "ws"
        guard arguments.positionals.count == 1, let text = arguments.positionals.first else {
            throw UsageError(message: "ws takes one URL", command: command)
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: true), !host.isEmpty,
              let base = ["ws": "http", "wss": "https", "http": "http", "https": "https"][scheme] else {
            throw UsageError(message: "'\(DisplayFormat.terminalSafe(text))' is not a ws:// or wss:// URL with a host", command: command)
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let remote = Remote(name: "ws", string: "\(base)://\(hostPart)" + (url.port.map { ":\($0)" } ?? "")) else {
            throw UsageError(message: "'\(DisplayFormat.terminalSafe(text))' has no usable host", command: command)
        }
        self.remote = remote
        path = url.path(percentEncoded: false)
        query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        (headers, removedHeaders) = try SendingOptions.headers(arguments.all(.header), command: command)
        transport = try HarnessTransport.resolve(arguments.value(.transport), environment: environment, command: command)
        connection = try ConnectionOptions(arguments, target: URL(string: "\(base)://\(hostPart)"), command: command, environment: environment)
        binary = arguments.has(.binary)
        json = arguments.has(.outputJSON)
        subprotocols = arguments.all(.subprotocol)
        if let text = arguments.value(.maxMessageSize) {
            guard let size = Int(text), size > 0 else {
                throw UsageError(message: "--max-message-size: '\(DisplayFormat.terminalSafe(text))' is not a positive number of bytes", command: command)
            }
            maximumMessageSize = size
        } else {
            maximumMessageSize = 16 << 20
        }
        offersCompression = !arguments.has(.noCompression)
        pingInterval = try arguments.value(.pingInterval).map { text throws(UsageError) in
            try RequestOptions.seconds(text, option: "--ping-interval", command: command)
        }
        idleTimeout = try arguments.value(.timeout).map { text throws(UsageError) in
            try RequestOptions.seconds(text, option: "--timeout", command: command)
        }
    }
}

extension OptionSpec {
    static let binary = OptionSpec(["--binary"], curl: .harnessOnly,
                                   help: "ws: input lines are hex, each sent as a binary message; binary messages received are printed as hex")
    static let subprotocol = OptionSpec(["--protocol"], value: "NAME", curl: .harnessOnly,
                                        help: "ws: offer this subprotocol (repeatable, in order of preference)")
    static let maxMessageSize = OptionSpec(["--max-message-size"], value: "BYTES", curl: .harnessOnly,
                                           help: "ws: the largest message accepted, after decompression (default 16 MiB); a larger one closes with 1009")
    static let noCompression = OptionSpec(["--no-compression"], curl: .harnessOnly, help: "ws: do not offer permessage-deflate")
    static let pingInterval = OptionSpec(["--ping-interval"], value: "SECONDS", curl: .harnessOnly,
                                         help: "ws: ping every SECONDS; a pong that does not come within 10 s closes with 1001")
}
