@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// `-w/--write-out FORMAT`, read as curl 7.88 reads it: `%{variable}`, `%header{name}`, `%%`,
/// the escapes `\n`, `\r` and `\t`; any other `%` or `\` sequence as written. `%{stdout}` and
/// `%{stderr}` choose where what follows goes (stdout at first). An unknown variable prints
/// nothing and a warning on stderr. Values are masked (URLs, credential headers) and escaped
/// for the terminal; the format's own text is written as given.
struct WriteOut: Sendable {
    /// Where a piece of the output goes.
    enum Stream: Sendable {
        case standardOutput, standardError
    }

    private enum Piece: Sendable {
        case text(String)
        case variable(String)
        case header(String)
    }

    private let pieces: [Piece]

    /// The format text, or `@FILE` (`@-`: standard input) to read it from.
    init(_ argument: String, command: String) throws(UsageError) {
        guard argument.hasPrefix("@") else {
            pieces = Self.parse(argument)
            return
        }
        let path = String(argument.dropFirst())
        let handle = path == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: path)
        guard let handle, let data = try? handle.read(upToCount: 1 << 20) else {
            throw UsageError(message: "-w: cannot read the format from \(path.isEmpty ? "''" : path)", command: command)
        }
        pieces = Self.parse(String(decoding: data, as: UTF8.self))
    }

    /// Whether the format reads `%{num_redirects}` (directly or in `%{json}`), which needs the exchanges counted.
    var countsRedirects: Bool {
        pieces.contains { piece in
            if case .variable(let name) = piece { return name == "num_redirects" || name == "json" }
            return false
        }
    }

    /// The output for a finished run, piece by piece with where each goes; `warn` gets a line
    /// for each unknown variable.
    func render(_ values: WriteOutValues, warn: (String) -> Void) -> [(stream: Stream, text: String)] {
        var stream = Stream.standardOutput
        var output: [(stream: Stream, text: String)] = []
        for piece in pieces {
            switch piece {
            case .text(let text):
                output.append((stream, text))
            case .header(let name):
                output.append((stream, values.header(name).map(DisplayFormat.terminalSafe) ?? ""))
            case .variable("stdout"):
                stream = .standardOutput
            case .variable("stderr"):
                stream = .standardError
            case .variable("json"):
                output.append((stream, values.json()))
            case .variable(let name):
                if let value = values.value(of: name) {
                    output.append((stream, DisplayFormat.terminalSafe(value)))
                } else {
                    warn("unknown --write-out variable: '\(DisplayFormat.terminalSafe(name))'")
                }
            }
        }
        return output
    }

    /// curl's reading of a format, character by character.
    private static func parse(_ format: String) -> [Piece] {
        var pieces: [Piece] = []
        var text = ""
        var rest = Substring(format)
        func flush() {
            if !text.isEmpty { pieces.append(.text(text)) }
            text = ""
        }
        while let character = rest.first {
            let next = rest.dropFirst().first
            if character == "%", let next {
                if next == "%" {
                    text.append("%")
                    rest = rest.dropFirst(2)
                } else if next == "{" {
                    rest = rest.dropFirst(2)
                    guard let end = rest.firstIndex(of: "}") else {
                        text += "%{"
                        continue
                    }
                    flush()
                    pieces.append(.variable(String(rest[..<end])))
                    rest = rest[rest.index(after: end)...]
                } else if rest.dropFirst().hasPrefix("header{") {
                    rest = rest.dropFirst("%header{".count)
                    guard let end = rest.firstIndex(of: "}") else {
                        text += "%header{"
                        continue
                    }
                    flush()
                    pieces.append(.header(String(rest[..<end])))
                    rest = rest[rest.index(after: end)...]
                } else {
                    text.append(character)
                    text.append(next)
                    rest = rest.dropFirst(2)
                }
            } else if character == "\\", let next {
                switch next {
                case "n": text.append("\n")
                case "r": text.append("\r")
                case "t": text.append("\t")
                default:
                    text.append(character)
                    text.append(next)
                }
                rest = rest.dropFirst(2)
            } else {
                text.append(character)
                rest = rest.dropFirst()
            }
        }
        flush()
        return pieces
    }
}

/// What `-w` variables are made of: one finished run, masked for display.
struct WriteOutValues {
    let report: RunReport
    let redaction: Redaction
    /// The exchanges the last attempt sent, when they were counted.
    let exchanges: Int?
    /// The size of the body as received: of the file `-o` wrote, or in memory.
    let bodySize: Int

    /// The variables the harness knows, as curl formats them.
    static let names = [
        "content_type", "errormsg", "exitcode", "http_code", "http_version", "method", "num_redirects", "redirect_url",
        "response_code", "size_download", "size_upload", "time_appconnect", "time_connect", "time_namelookup",
        "time_starttransfer", "time_total", "url_effective",
    ]

    /// A variable's value, or `nil` for one the harness does not know.
    func value(of name: String) -> String? {
        let response = report.response
        let metrics = response?.metrics ?? ExchangeMetrics()
        switch name {
        case "content_type": return response?.header("Content-Type") ?? ""
        case "errormsg": return report.errorText ?? ""
        case "exitcode": return String(report.exitCode.rawValue)
        case "http_code", "response_code": return String(format: "%03d", response?.statusCode ?? 0)
        case "http_version": return response.map { Self.version($0.head.httpVersion) } ?? "0"
        case "method": return report.method
        case "num_redirects": return String(max(0, (exchanges ?? 1) - 1))
        case "redirect_url": return redirectURL() ?? ""
        case "size_download": return String(metrics.bytesReceived.map(Int.init) ?? bodySize)
        case "size_upload": return String(metrics.bytesSent ?? 0)
        case "time_appconnect": return Self.seconds(metrics.tlsHandshake)
        case "time_connect": return Self.seconds(metrics.connect)
        case "time_namelookup": return Self.seconds(metrics.nameLookup)
        case "time_starttransfer": return Self.seconds(metrics.firstByte)
        case "time_total": return Self.seconds(report.duration)
        case "url_effective": return report.url ?? ""
        default: return nil
        }
    }

    /// A response header's value, masked when it carries a credential; `nil` without a response.
    func header(_ name: String) -> String? {
        guard let response = report.response else { return nil }
        return redaction.maskedFields(response.headerFields)[name] ?? ""
    }

    /// Every variable as one JSON object, keys sorted, escaped for the terminal.
    func json() -> String {
        var object: [String: Any] = [:]
        for name in Self.names {
            guard let value = value(of: name) else { continue }
            object[name] = Int(value).map { $0 as Any } ?? (Double(value).map { $0 as Any } ?? value)
        }
        object["http_code"] = report.response?.statusCode ?? 0
        object["response_code"] = report.response?.statusCode ?? 0
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "{}" }
        return DisplayFormat.terminalSafeJSON(String(decoding: data, as: UTF8.self))
    }

    /// Where a redirect that was not followed points, resolved against its URL and masked.
    private func redirectURL() -> String? {
        guard let response = report.response, (300..<400).contains(response.statusCode),
              let location = response.header("Location"),
              let target = URL(string: location, relativeTo: response.head.url)?.absoluteURL else { return nil }
        return redaction.maskedURL(target)
    }

    /// `HTTP/1.1` as curl's `http_version` writes it: `1.1`.
    private static func version(_ text: String) -> String {
        text.hasPrefix("HTTP/") ? String(text.dropFirst("HTTP/".count)) : text
    }

    /// Seconds with six decimals, as curl writes times; 0 for a time not measured.
    private static func seconds(_ duration: Duration?) -> String {
        String(format: "%.6f", (duration ?? .zero) / .seconds(1))
    }
}
