import Foundation

/// The client's side of the WebSocket opening handshake (RFC 6455 §4.1): the fields its GET adds,
/// with a fresh key, and the check of the server's answer.
///
/// ```swift
/// let handshake = try WebSocketHandshake(subprotocols: ["chat"])
/// request.fields.append(contentsOf: handshake.requestFields)
/// // … send the request, read the response head …
/// switch try handshake.check(head) {
/// case .upgraded(let negotiated): // the connection now speaks WebSocket frames
/// case .declined(let status): // an ordinary HTTP answer: the task's HTTPError
/// }
/// ```
struct WebSocketHandshake: Sendable, Hashable {
    /// The GUID RFC 6455 §1.3 appends to the key before hashing it.
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The protocol version this client speaks (RFC 6455 §4.1).
    static let version = "13"

    /// `Sec-WebSocket-Key`: 16 random bytes in base64.
    let key: String
    /// The subprotocols offered in `Sec-WebSocket-Protocol`, in order of preference.
    let subprotocols: [String]
    /// The permessage-deflate offer, `nil` when compression is not offered.
    let deflateOffer: PerMessageDeflateOffer?

    /// A handshake with a fresh key from the system's random source. Throws when a subprotocol
    /// is not a token (RFC 6455 §4.1) or is named twice, or the deflate offer is out of range.
    init(subprotocols: [String] = [], deflateOffer: PerMessageDeflateOffer? = PerMessageDeflateOffer()) throws(WebSocketHandshakeError) {
        var random = SystemRandomNumberGenerator()
        var keyBytes: [UInt8] = []
        for _ in 0..<2 {
            let word = random.next() as UInt64
            for shift in stride(from: 0, to: 64, by: 8) { keyBytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        try self.init(key: Data(keyBytes).base64EncodedString(), subprotocols: subprotocols, deflateOffer: deflateOffer)
    }

    /// A handshake with a given key: for the tests' fixed vectors.
    init(key: String, subprotocols: [String] = [], deflateOffer: PerMessageDeflateOffer? = PerMessageDeflateOffer()) throws(WebSocketHandshakeError) {
        for (index, name) in subprotocols.enumerated() {
            guard WebSocketExtension.isToken(name) else { throw .invalidSubprotocolOffer(name, reason: "it is not an HTTP token") }
            guard !subprotocols[..<index].contains(name) else { throw .invalidSubprotocolOffer(name, reason: "it is offered twice") }
        }
        if let problem = deflateOffer?.problem { throw .invalidDeflateOffer(problem) }
        self.key = key
        self.subprotocols = subprotocols
        self.deflateOffer = deflateOffer
    }

    /// The fields the opening request adds to a GET: `Upgrade`, `Connection`, the version, the
    /// key, and the subprotocol and extension offers when there are any.
    var requestFields: [Header] {
        var fields = [
            Header(name: "Upgrade", value: "websocket"),
            Header(name: "Connection", value: "Upgrade"),
            Header(name: "Sec-WebSocket-Version", value: Self.version),
            Header(name: "Sec-WebSocket-Key", value: key),
        ]
        if !subprotocols.isEmpty { fields.append(Header(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", "))) }
        if let deflateOffer { fields.append(Header(name: "Sec-WebSocket-Extensions", value: deflateOffer.fieldValue)) }
        return fields
    }

    /// The `Sec-WebSocket-Accept` value a server must answer `key` with (RFC 6455 §4.2.2): the
    /// base64 of the SHA-1 of the key followed by the GUID.
    static func acceptValue(forKey key: String) -> String {
        Data(SHA1.digest(Array((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// What the server's answer means: `.upgraded` with what was negotiated when it switched
    /// protocols as RFC 6455 §4.1 requires, `.declined` for any status but 101 (an ordinary HTTP
    /// answer for the caller to report as such). Throws when a 101 breaks a rule: `Upgrade` not
    /// `websocket`, no `Upgrade` token in `Connection`, a wrong or missing `Sec-WebSocket-Accept`,
    /// a subprotocol or an extension that was not offered, or extension parameters RFC 7692 refuses.
    func check(_ head: ResponseHead) throws(WebSocketHandshakeError) -> WebSocketHandshakeOutcome {
        guard head.statusCode == 101 else { return .declined(statusCode: head.statusCode) }

        let upgrade = head.value(forHTTPHeaderField: "Upgrade")
        guard let upgrade, upgrade.trimmingASCIIWhitespace().equalsIgnoringASCIICase("websocket") else {
            throw .upgradeNotWebSocket(upgrade)
        }
        var hasUpgradeToken = false
        head.forEachValue(named: "Connection") { value in
            hasUpgradeToken = value.split(separator: ",").contains { String($0).trimmingASCIIWhitespace().equalsIgnoringASCIICase("upgrade") }
            return !hasUpgradeToken
        }
        guard hasUpgradeToken else { throw .connectionWithoutUpgrade(head.value(forHTTPHeaderField: "Connection")) }

        let expected = Self.acceptValue(forKey: key)
        guard let accept = head.value(forHTTPHeaderField: "Sec-WebSocket-Accept") else { throw .missingAccept(expected: expected) }
        guard accept.trimmingASCIIWhitespace() == expected else { throw .wrongAccept(expected: expected, received: accept) }

        var subprotocol: String?
        if let chosen = head.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") {
            let name = chosen.trimmingASCIIWhitespace()
            guard subprotocols.contains(name) else { throw .subprotocolNotOffered(chosen, offered: subprotocols) }
            subprotocol = name
        }

        var extensions: [WebSocketExtension] = []
        var deflate: PerMessageDeflateParameters?
        if let field = head.value(forHTTPHeaderField: "Sec-WebSocket-Extensions") {
            extensions = try WebSocketExtension.parseList(field)
            for chosen in extensions {
                guard chosen.name == PerMessageDeflateOffer.extensionName, let deflateOffer else {
                    throw .extensionNotOffered(chosen.name)
                }
                guard deflate == nil else { throw .extensionRepeated(chosen.name) }
                deflate = try deflateOffer.accept(chosen)
            }
        }
        return .upgraded(WebSocketNegotiation(subprotocol: subprotocol, extensions: extensions.map(\.text), deflate: deflate))
    }
}

/// What the server's answer to the opening handshake means.
enum WebSocketHandshakeOutcome: Sendable, Hashable {
    /// The server switched to WebSocket (101) and the answer checks out.
    case upgraded(WebSocketNegotiation)
    /// The server answered with another status: not a WebSocket failure but an HTTP answer,
    /// which the caller reports as the task's `HTTPError`.
    case declined(statusCode: Int)
}

/// What a successful handshake settled.
struct WebSocketNegotiation: Sendable, Hashable {
    /// The subprotocol the server chose among those offered, `nil` when it chose none.
    var subprotocol: String?
    /// The extensions the server chose, each as its field spelt it (`permessage-deflate; server_no_context_takeover`).
    var extensions: [String]
    /// permessage-deflate's parameters, when the server accepted it.
    var deflate: PerMessageDeflateParameters?
}

/// Why the opening handshake failed although the server answered 101, why it could not be
/// offered, or why the answer could not be read from a raw connection.
enum WebSocketHandshakeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A subprotocol to offer is not an HTTP token, or is offered twice.
    case invalidSubprotocolOffer(String, reason: String)
    /// The permessage-deflate offer has a window outside 8–15.
    case invalidDeflateOffer(String)
    /// `Upgrade` is missing (`nil`) or is not `websocket`.
    case upgradeNotWebSocket(String?)
    /// `Connection` is missing (`nil`) or has no `Upgrade` token.
    case connectionWithoutUpgrade(String?)
    /// `Sec-WebSocket-Accept` is missing; `expected` is what the key called for.
    case missingAccept(expected: String)
    /// `Sec-WebSocket-Accept` is not the value the key calls for: the server did not read this
    /// handshake's key (a cache or a proxy answered, or not a WebSocket server).
    case wrongAccept(expected: String, received: String)
    /// The server chose a subprotocol the client did not offer (`offered`, empty when it offered none).
    case subprotocolNotOffered(String, offered: [String])
    /// The server chose an extension the client did not offer.
    case extensionNotOffered(String)
    /// The server named an extension twice.
    case extensionRepeated(String)
    /// `Sec-WebSocket-Extensions` does not follow the field's grammar (RFC 6455 §9.1).
    case malformedExtensionsField(String)
    /// The server's parameters for an offered extension break its rules (RFC 7692 §7.1).
    case invalidExtensionParameter(extension: String, parameter: String, reason: String)
    /// The answer read from a raw connection is not an HTTP/1.1 head: `reason` quotes the bad line.
    case malformedResponseHead(String)
    /// The answer's head grew past `limit` bytes before its blank line.
    case responseHeadTooLarge(limit: Int)

    /// What was wrong, in a sentence.
    var description: String {
        switch self {
        case .invalidSubprotocolOffer(let name, let reason):
            "the subprotocol \"\(name)\" cannot be offered: \(reason)"
        case .invalidDeflateOffer(let reason):
            "the permessage-deflate offer cannot be made: \(reason)"
        case .upgradeNotWebSocket(let value):
            value.map { "the server's 101 has Upgrade: \($0), not websocket" } ?? "the server's 101 has no Upgrade field"
        case .connectionWithoutUpgrade(let value):
            value.map { "the server's 101 has Connection: \($0), without the Upgrade token" } ?? "the server's 101 has no Connection field"
        case .missingAccept(let expected):
            "the server's 101 has no Sec-WebSocket-Accept (expected \(expected))"
        case .wrongAccept(let expected, let received):
            "the server's Sec-WebSocket-Accept is \(received), not the \(expected) the key calls for"
        case .subprotocolNotOffered(let name, let offered):
            offered.isEmpty ? "the server chose the subprotocol \"\(name)\" though none was offered"
                : "the server chose the subprotocol \"\(name)\", which is not among those offered (\(offered.joined(separator: ", ")))"
        case .extensionNotOffered(let name):
            "the server chose the extension \(name), which was not offered"
        case .extensionRepeated(let name):
            "the server named the extension \(name) twice"
        case .malformedExtensionsField(let value):
            "the server's Sec-WebSocket-Extensions is malformed: \(value)"
        case .invalidExtensionParameter(let name, let parameter, let reason):
            "the server's \(name) parameter \(parameter) is refused: \(reason)"
        case .malformedResponseHead(let reason):
            "the server's answer is not an HTTP/1.1 head: \(reason)"
        case .responseHeadTooLarge(let limit):
            "the server's answer has a head larger than \(limit) bytes"
        }
    }
}
