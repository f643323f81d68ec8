@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Runs `ws`: connects, sends standard input's lines, prints what comes in, and reports how the
/// connection ended as the exit code.
@ConveyActor
enum WebSocketRunner {
    static func run(_ options: WebSocketOptions, console: Console) async -> ExitCode {
        var configuration = ServerConfiguration(echoSink: standardErrorEcho)
        let closes = CloseWatcher()
        configuration.observers = [closes]
        let server = ConveyServer(remote: options.remote, configuration: configuration)
        HarnessTransport.install(on: server, target: .remote(options.remote), builtIn: options.transport, connection: options.connection)
        if let warning = options.connection.insecureWarning { console.err(console.styledError(warning, .yellow)) }
        let output = WebSocketOutput(console: console, json: options.json, binary: options.binary, redaction: configuration.redaction)
        let connection: WebSocketConnection
        do {
            connection = try await HarnessSocket(server: server, options: options).connect()
        } catch {
            return output.failed(error, close: nil)
        }
        output.opened(connection)
        let sending = Task { await send(StandardInputLines.read(), over: connection, options: options, output: output) }
        defer { sending.cancel() }
        do {
            for try await message in connection.messages { output.message(message) }
            output.closed(await closes.last)
            return .ok
        } catch {
            return output.failed(error, close: await closes.last)
        }
    }

    /// Sends each line, then closes with 1000. A line that is not hex with `--binary` is reported
    /// and skipped.
    private static func send(_ lines: AsyncStream<String>, over connection: WebSocketConnection, options: WebSocketOptions,
                             output: WebSocketOutput) async {
        do {
            for await line in lines {
                if options.binary {
                    guard let data = Data(hex: line) else {
                        output.note("not sent: '\(line.prefix(40))' is not hex (--binary)")
                        continue
                    }
                    try await connection.send(data)
                } else {
                    try await connection.send(line)
                }
            }
            if Task.isCancelled { return }
            try await connection.close()
        } catch {
            // The connection ended: the reading side reports how.
        }
    }
}

/// A WebSocket task from the command line.
private struct HarnessSocket: WebSocketTask {
    let server: ConveyServer
    let options: WebSocketOptions

    var path: String { options.path }
    var queryItems: [URLQueryItem] { options.query }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: options.headers)
            return headers
        }
    }
    var subprotocols: [String] { options.subprotocols }
    var maximumMessageSize: Int { options.maximumMessageSize }
    var offersCompression: Bool { options.offersCompression }
    var pingInterval: Duration? { options.pingInterval }
    var configuration: TaskConfiguration? { options.idleTimeout.map { TaskConfiguration(timeout: $0) } }
    var echoStyle: TaskEchoStyle { .none }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        var request = request
        for name in options.removedHeaders { request.fields.remove(named: name) }
        return request
    }
}

/// Keeps the last close a connection's run told its observers: its code, reason and who closed.
private actor CloseWatcher: RunObserver {
    private(set) var last: WebSocketOutput.Close?

    func observe(_ event: RunEvent) async throws {
        guard case .webSocketClosed(let code, let reason, let byClient, _, _, _) = event.kind else { return }
        last = WebSocketOutput.Close(code: code, reason: reason, byClient: byClient)
    }
}

/// Standard input's lines, read on a thread of its own (a blocking read must not hold one of
/// the tasks' threads), as they come; the stream ends at the end of input.
enum StandardInputLines {
    static func read() -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                while let line = readLine(strippingNewline: true) {
                    if case .terminated = continuation.yield(line) { return }
                }
                continuation.finish()
            }
            reader.name = "convey-harness.stdin"
            reader.start()
        }
    }
}

/// What `ws` prints: text messages alone on standard output (or one JSON object per event with
/// `--output-json`), everything else on standard error.
struct WebSocketOutput: Sendable {
    /// How a connection closed, as its run's observers heard it.
    struct Close: Sendable {
        let code: Int?
        let reason: String
        let byClient: Bool
    }

    let console: Console
    let json: Bool
    let binary: Bool
    let redaction: Redaction

    func opened(_ connection: WebSocketConnection) {
        if let head = connection.handshake {
            console.err(console.styledError("\(head.httpVersion) \(head.statusCode) \(HTTPStatus.reasonPhrase(for: head.statusCode))", .bold))
            for field in redaction.maskedFields(head.fields) {
                console.err(console.styledError("\(field.name): ", .cyan) + DisplayFormat.terminalSafe(field.value))
            }
        }
        note("connected" + (connection.subprotocol.map { ", subprotocol \($0)" } ?? "")
            + (connection.extensions.isEmpty ? "" : ", " + connection.extensions.joined(separator: ", ")))
        if json {
            line([("event", "open"), ("protocol", connection.subprotocol as Any? ?? NSNull()), ("extensions", connection.extensions)])
        }
    }

    func message(_ message: WebSocketMessage) {
        switch message {
        case .text(let text):
            if json {
                line([("event", "message"), ("type", "text"), ("data", text)])
            } else {
                console.out(console.outputIsTerminal ? DisplayFormat.terminalSafe(text) : text)
            }
        case .binary(let data):
            if json {
                line([("event", "message"), ("type", "binary"), ("hex", data.hexText)])
            } else if binary {
                console.out(data.hexText)
            } else {
                note("a binary message of \(DisplayFormat.byteCount(data.count)) (--binary prints it as hex)")
            }
        }
    }

    func closed(_ close: Close?) {
        guard let close else { return }
        note("closed \(close.code.map(String.init) ?? "without a code") by the \(close.byClient ? "client" : "server")"
            + (close.reason.isEmpty ? "" : ": \(redaction.maskedText(close.reason))"))
        if json {
            line([("event", "close"), ("code", close.code as Any? ?? NSNull()), ("reason", close.reason), ("by", close.byClient ? "client" : "server")])
        }
    }

    /// Reports how the connection failed (after its close, when the client closed it) and returns the exit code.
    func failed(_ error: any Error, close: Close?) -> ExitCode {
        if error.isCancellation {
            console.err(console.styledError("Interrupted", .yellow))
            return .interrupted
        }
        if let close, close.code != nil { closed(close) }
        let detail = redaction.maskedText((error as? ConveyError)?.logDetail ?? (error as? HTTPError)?.logDetail ?? String(describing: error))
        console.fail(detail)
        if json { line([("event", "error"), ("kind", Self.kind(of: error)), ("detail", detail)]) }
        return ExitCode(error: error)
    }

    /// A line on standard error.
    func note(_ text: String) {
        console.err(console.styledError(text, .dim))
    }

    /// `webSocket` failures by their kind (`connectionLost`, `protocolError`, …), HTTP errors as
    /// `http`, other Convey errors by their case.
    private static func kind(of error: any Error) -> String {
        if error is HTTPError { return "http" }
        guard let convey = error as? ConveyError else { return "other" }
        if case .webSocket(let failure, _, _, _) = convey { return failure.rawValue }
        return convey.caseName
    }

    /// One JSON object with its members in order, on one line of standard output.
    private func line(_ members: [(String, Any)]) {
        let text = members.map { name, value in
            let encoded = (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "null"
            return "\"\(name)\":\(encoded)"
        }
        console.out("{" + text.joined(separator: ",") + "}")
    }
}

extension Data {
    /// The bytes of `hex` (pairs of hexadecimal digits, spaces allowed between them), or `nil`.
    init?(hex: String) {
        let digits = hex.filter { !$0.isWhitespace }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }

    /// The bytes as lowercase hexadecimal, two digits each.
    var hexText: String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
