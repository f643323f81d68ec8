/// One extension of a `Sec-WebSocket-Extensions` field (RFC 6455 §9.1): its name and parameters.
struct WebSocketExtension: Sendable, Hashable {
    /// One `name` or `name=value` parameter; a quoted value is unquoted.
    struct Parameter: Sendable, Hashable {
        /// The parameter's name.
        var name: String
        /// Its value, `nil` when it has none.
        var value: String?
    }

    /// The extension's name, such as `permessage-deflate`.
    var name: String
    /// Its parameters in order, repeats kept.
    var parameters: [Parameter]
    /// The extension as the field spelt it, trimmed: what the server is reported to have chosen.
    var text: String

    /// The extensions a `Sec-WebSocket-Extensions` value lists, in order, or the reason it is
    /// not the field's grammar: `extension *( "," extension )`, each `token *( ";" param )`, each
    /// param `token [ "=" ( token / quoted-string ) ]`.
    static func parseList(_ field: String) throws(WebSocketHandshakeError) -> [WebSocketExtension] {
        var extensions: [WebSocketExtension] = []
        for element in split(field, at: UInt8(ascii: ",")) {
            let text = trimmed(element)
            // An empty element is allowed by the list rule (RFC 9110 §5.6.1) and means nothing.
            if text.isEmpty { continue }
            let pieces = split(text, at: UInt8(ascii: ";")).map(trimmed)
            let name = pieces[0]
            guard isToken(name) else { throw .malformedExtensionsField(field) }
            var parameters: [Parameter] = []
            for piece in pieces.dropFirst() {
                guard let parameter = parameter(piece) else { throw .malformedExtensionsField(field) }
                parameters.append(parameter)
            }
            extensions.append(WebSocketExtension(name: name, parameters: parameters, text: text))
        }
        return extensions
    }

    /// `name` or `name=value`, the value a token or a quoted string holding a token (RFC 6455 §9.1).
    private static func parameter(_ text: String) -> Parameter? {
        guard let equals = text.firstIndex(of: "=") else { return isToken(text) ? Parameter(name: text, value: nil) : nil }
        let name = trimmed(String(text[..<equals]))
        var value = trimmed(String(text[text.index(after: equals)...]))
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
            value = String(value.dropFirst().dropLast()).replacingBackslashEscapes()
        }
        guard isToken(name), isToken(value) else { return nil }
        return Parameter(name: name, value: value)
    }

    /// The pieces of `text` between `separator`s that stand outside quoted strings.
    private static func split(_ text: String, at separator: UInt8) -> [String] {
        var pieces: [String] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        for byte in text.utf8 {
            if inQuotes {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inQuotes = false }
            } else if byte == UInt8(ascii: "\"") {
                inQuotes = true
            } else if byte == separator {
                pieces.append(String(decoding: current, as: UTF8.self))
                current.removeAll(keepingCapacity: true)
                continue
            }
            current.append(byte)
        }
        pieces.append(String(decoding: current, as: UTF8.self))
        return pieces
    }

    private static func trimmed(_ text: String) -> String {
        text.trimmingASCIIWhitespace()
    }

    /// Whether `text` is an HTTP token (RFC 9110 §5.6.2): letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}

extension String {
    /// A quoted string's content with its backslash escapes (`\"`, `\\`) resolved (RFC 9110 §5.6.4).
    fileprivate func replacingBackslashEscapes() -> String {
        var result: [UInt8] = []
        var escaped = false
        for byte in utf8 {
            if !escaped, byte == UInt8(ascii: "\\") {
                escaped = true
                continue
            }
            escaped = false
            result.append(byte)
        }
        return String(decoding: result, as: UTF8.self)
    }
}
