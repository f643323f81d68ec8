import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The rule for request header fields, wherever they come from: a name is a token (RFC 9110
/// §5.1: letters, digits and ``!#$%&'*+-.^_`|~``) and a value holds no CR, LF or NUL (§5.5).
/// A field that breaks it could end its header line early and smuggle in another.
enum FieldValidation {
    /// Throws `ConveyError.invalidHeaderField` for the first field that breaks the rule.
    static func check(name: String, value: String, source: HeaderFieldSource) throws(ConveyError) {
        if let reason = problem(name: name, value: value) {
            throw .invalidHeaderField(name: name, source: source.phrase, reason: reason)
        }
    }

    /// Checks every field in `headers`.
    static func check(_ headers: some Sequence<Header>, source: HeaderFieldSource) throws(ConveyError) {
        for header in headers { try check(name: header.name, value: header.value, source: source) }
    }

    /// Checks a request as a step or hook hands it on: its method and target, which make its
    /// request line, and every field.
    static func check(_ request: OutgoingRequest, source: HeaderFieldSource) throws(ConveyError) {
        try check(method: request.method, source: source)
        try check(target: request.url, source: source)
        try check(request.fields, source: source)
    }

    /// Throws `ConveyError.invalidHeaderField` named `:method` (HTTP/2's name for it) when a method
    /// is not a token (RFC 9110 §9.1): one holding CR or LF could end the request line early and
    /// smuggle in a request of its own.
    static func check(method: HTTPMethod, source: HeaderFieldSource) throws(ConveyError) {
        let name = method.rawValue
        if name.isEmpty {
            throw .invalidHeaderField(name: ":method", source: source.phrase, reason: "the method is empty")
        }
        if let bad = name.utf8.first(where: { !isTokenCharacter($0) }) {
            throw .invalidHeaderField(name: ":method", source: source.phrase,
                                      reason: "the method holds \(describe(bad)), and a method is a token (RFC 9110 §9.1)")
        }
    }

    /// Throws `ConveyError.invalidHeaderField` named `:path` when the request target holds a
    /// control character or a space, which would end the request line early (RFC 9112 §3).
    static func check(target url: URL, source: HeaderFieldSource) throws(ConveyError) {
        if let bad = url.absoluteString.utf8.first(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw .invalidHeaderField(name: ":path", source: source.phrase,
                                      reason: "the request target holds \(describe(bad)), which would end the request line (RFC 9112 §3)")
        }
    }

    /// Why a field cannot be sent, or `nil` when it can.
    static func problem(name: String, value: String) -> String? {
        if name.isEmpty { return "its name is empty" }
        if let bad = name.utf8.first(where: { !isTokenCharacter($0) }) {
            return "its name holds \(describe(bad)), which is not allowed in a field name (RFC 9110 §5.1)"
        }
        if let bad = value.utf8.first(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            return "its value holds \(describe(bad)), which would end the header line (RFC 9110 §5.5)"
        }
        return nil
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x0D: "a carriage return (CR)"
        case 0x0A: "a line feed (LF)"
        case 0x20: "a space"
        case 0x00: "a NUL byte"
        case 0x21..<0x7F: "\"\(Character(Unicode.Scalar(byte)))\""
        default: "the byte 0x\(String(byte, radix: 16, uppercase: true))"
        }
    }
}
