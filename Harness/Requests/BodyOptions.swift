@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The request body the command line asks for, built as curl builds it.
///
/// `-d`, `--data-ascii`, `--data-binary`, `--data-raw`, `--data-urlencode` and `--json` pieces
/// are joined in the order given, with `&` before each piece but a `--json` one; the body is
/// `application/x-www-form-urlencoded`, or `application/json` (with `Accept: application/json`)
/// when a `--json` piece is among them. `-F` and `--form-string` make a `multipart/form-data`
/// body, in the order given. A `-H 'Content-Type: …'` replaces the type.
struct BodyOptions: Sendable {
    static let options: [OptionSpec] = [.data, .dataASCII, .dataBinary, .dataRaw, .dataURLEncode, .json, .form, .formString]

    /// The largest file or standard input read into memory for a body piece.
    static let largestInMemoryPiece = 100 << 20

    /// What the body is made of.
    enum Content: Sendable {
        case none
        /// Bytes in memory.
        case data(Data, contentType: String)
        /// One file sent as it is (`--data-binary @FILE` or `--json @FILE` alone): streamed from disk.
        case file(URL, contentType: String)
        /// `-F` and `--form-string` parts, in order.
        case multipart([FormPart])
    }

    /// One part of a multipart body.
    struct FormPart: Sendable {
        enum Value: Sendable {
            case text(String)
            case file(URL, filename: String?)
        }

        let name: String
        let value: Value
        let mimeType: String?
    }

    let content: Content
    /// Whether a `--json` piece asked for `Accept: application/json`.
    let acceptsJSON: Bool

    init(_ arguments: ParsedArguments, command: String) throws(UsageError) {
        let pieces = arguments.inOrder([.data, .dataASCII, .dataBinary, .dataRaw, .dataURLEncode, .json])
        let parts = arguments.inOrder([.form, .formString])
        guard pieces.isEmpty || parts.isEmpty else {
            throw UsageError(message: "choose one kind of body: -d/--data…/--json, or -F/--form", command: command)
        }
        acceptsJSON = pieces.contains { $0.option.key == OptionSpec.json.key }
        let contentType = acceptsJSON ? "application/json" : "application/x-www-form-urlencoded"
        if !parts.isEmpty {
            content = .multipart(try parts.map { part throws(UsageError) in try Self.formPart(part.value, literal: part.option.key == OptionSpec.formString.key, command: command) })
        } else if pieces.count == 1, let only = pieces.first, only.option.key != OptionSpec.data.key, only.option.key != OptionSpec.dataASCII.key,
                  only.option.key != OptionSpec.dataURLEncode.key, only.option.key != OptionSpec.dataRaw.key,
                  only.value.hasPrefix("@"), only.value != "@-" {
            // A file sent as it is: streamed from disk, never held in memory.
            let path = String(only.value.dropFirst())
            guard !path.isEmpty else { throw UsageError(message: "\(only.option.names[0]): '@' needs a file path", command: command) }
            content = .file(URL(filePath: path), contentType: contentType)
        } else if !pieces.isEmpty {
            var body = Data()
            for (index, piece) in pieces.enumerated() {
                if index > 0, piece.option.key != OptionSpec.json.key { body.append(UInt8(ascii: "&")) }
                body.append(try Self.bytes(of: piece.option, piece.value, command: command))
            }
            content = .data(body, contentType: contentType)
        } else {
            content = .none
        }
    }

    /// Whether the command line gave no body.
    var isEmpty: Bool {
        if case .none = content { return true }
        return false
    }

    /// One piece's bytes, as its option reads its value.
    private static func bytes(of option: OptionSpec, _ value: String, command: String) throws(UsageError) -> Data {
        let name = option.names[0]
        switch option.key {
        case OptionSpec.dataRaw.key:
            return Data(value.utf8)
        case OptionSpec.dataURLEncode.key:
            return Data(try urlEncoded(value, command: command).utf8)
        case OptionSpec.data.key, OptionSpec.dataASCII.key:
            // As curl: a file's carriage returns and line feeds are left out.
            guard value.hasPrefix("@") else { return Data(value.utf8) }
            return try read(String(value.dropFirst()), option: name, command: command).filter { $0 != 0x0D && $0 != 0x0A }
        default:
            guard value.hasPrefix("@") else { return Data(value.utf8) }
            return try read(String(value.dropFirst()), option: name, command: command)
        }
    }

    /// `--data-urlencode`: `content` or `=content` sends the content encoded, `name=content` the
    /// name and the encoded content, `@file` and `name@file` a file's content encoded.
    private static func urlEncoded(_ value: String, command: String) throws(UsageError) -> String {
        // As curl: whichever of `=` and `@` comes first splits the name off.
        guard let split = value.firstIndex(where: { $0 == "=" || $0 == "@" }) else { return encode(Data(value.utf8)) }
        let name = value[..<split]
        let rest = String(value[value.index(after: split)...])
        let content = value[split] == "=" ? Data(rest.utf8) : try read(rest, option: "--data-urlencode", command: command)
        return (name.isEmpty ? "" : name + "=") + encode(content)
    }

    /// Percent-encodes every byte but the unreserved ones (RFC 3986), as curl does: a space is `%20`.
    private static func encode(_ data: Data) -> String {
        var text = ""
        for byte in data {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += String(format: "%%%02X", byte)
            }
        }
        return text
    }

    /// A file's bytes, or standard input's for `-`, up to `largestInMemoryPiece`.
    private static func read(_ path: String, option: String, command: String) throws(UsageError) -> Data {
        guard !path.isEmpty else { throw UsageError(message: "\(option): '@' needs a file path, or - for standard input", command: command) }
        let handle = path == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: path)
        guard let handle else { throw UsageError(message: "\(option): cannot read \(path)", command: command) }
        defer { if path != "-" { try? handle.close() } }
        guard let data = try? handle.read(upToCount: largestInMemoryPiece + 1) else {
            throw UsageError(message: "\(option): cannot read \(path)", command: command)
        }
        guard data.count <= largestInMemoryPiece else {
            throw UsageError(message: "\(option): \(path) is larger than \(largestInMemoryPiece >> 20) MiB; send a large file alone with --data-binary @FILE, which streams it",
                             command: command)
        }
        return data
    }

    /// `-F NAME=VALUE`, `NAME=@FILE[;type=TYPE][;filename=NAME]`, `NAME=<FILE[;type=TYPE]`; with
    /// `literal` (`--form-string`) the value is text as given.
    private static func formPart(_ text: String, literal: Bool, command: String) throws(UsageError) -> FormPart {
        let option = literal ? "--form-string" : "-F"
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw UsageError(message: "\(option): expected NAME=VALUE, NAME=@FILE or NAME=<FILE", command: command)
        }
        let name = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        guard !literal, let first = value.first, first == "@" || first == "<" else {
            return FormPart(name: name, value: .text(value), mimeType: nil)
        }
        var parameters = value.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let path = parameters.removeFirst()
        guard !path.isEmpty else { throw UsageError(message: "\(option): '\(first)' needs a file path", command: command) }
        var mimeType: String?
        var filename: String?
        for parameter in parameters {
            if parameter.hasPrefix("type=") {
                mimeType = String(parameter.dropFirst("type=".count))
            } else if parameter.hasPrefix("filename=") {
                filename = String(parameter.dropFirst("filename=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            } else {
                throw UsageError(message: "\(option): unknown part parameter '\(parameter.prefix { $0 != "=" })' (type= and filename= are read)", command: command)
            }
        }
        if first == "<" {
            let data = try read(path, option: option, command: command)
            return FormPart(name: name, value: .text(String(decoding: data, as: UTF8.self)), mimeType: mimeType)
        }
        return FormPart(name: name, value: .file(URL(filePath: path), filename: filename), mimeType: mimeType)
    }
}

extension OptionSpec {
    static let data = OptionSpec(["-d", "--data"], value: "DATA|@FILE", curl: .same,
                                 help: "send DATA (a file's without its line breaks) as a form body; repeated ones are joined with '&'")
    static let dataASCII = OptionSpec(["--data-ascii"], value: "DATA|@FILE", curl: .same, help: "the same as -d")
    static let dataBinary = OptionSpec(["--data-binary"], value: "DATA|@FILE", curl: .same,
                                       help: "send DATA or a file exactly as it is (a file alone is streamed from disk)")
    static let dataRaw = OptionSpec(["--data-raw"], value: "DATA", curl: .same, help: "send DATA as it is, a leading @ included")
    static let dataURLEncode = OptionSpec(["--data-urlencode"], value: "[NAME]=TEXT|[NAME]@FILE", curl: .same,
                                          help: "send TEXT or a file's content percent-encoded, after NAME= when given")
    static let json = OptionSpec(["--json"], value: "JSON|@FILE", curl: .same,
                                 help: "send JSON as it is, with Content-Type and Accept application/json (repeated ones are joined)")
    static let form = OptionSpec(["-F", "--form"], value: "NAME=VALUE|NAME=@FILE", curl: .differs("';type=' and ';filename=' are read after @FILE and <FILE only"),
                                 help: "send a multipart/form-data field: text, a file (@FILE[;type=T][;filename=N]) or a file's text (<FILE)")
    static let formString = OptionSpec(["--form-string"], value: "NAME=TEXT", curl: .same, help: "send a multipart field whose text is taken as it is")
}
