/// What the client offers for permessage-deflate (RFC 7692 §7.1), and how it reads the server's answer.
///
/// The default offer is `permessage-deflate; client_max_window_bits`: the client can compress
/// with any window the server asks for, and lets the server keep its context between messages.
struct PerMessageDeflateOffer: Sendable, Hashable {
    /// The extension's name in the handshake fields.
    static let extensionName = "permessage-deflate"
    /// The window sizes RFC 7692 allows, as powers of two.
    static let windowBitsRange = 8...15

    /// Asks the server to compress each message on its own (`server_no_context_takeover`), so
    /// that the client holds no inflate context between messages.
    var serverNoContextTakeover = false
    /// Tells the server the client compresses each message on its own (`client_no_context_takeover`).
    var clientNoContextTakeover = false
    /// Asks the server for an LZ77 window of at most 2^bits bytes (`server_max_window_bits`, 8–15);
    /// `nil` leaves it to the server.
    var serverMaxWindowBits: Int?
    /// Limits the client's window to 2^bits bytes (`client_max_window_bits=N`, 8–15); `nil`
    /// offers the parameter without a value: the server may choose any window for the client.
    var clientMaxWindowBits: Int?

    /// The offer with every parameter at its default.
    init() {}

    /// The `Sec-WebSocket-Extensions` value that makes this offer.
    var fieldValue: String {
        var value = Self.extensionName
        if serverNoContextTakeover { value += "; server_no_context_takeover" }
        if clientNoContextTakeover { value += "; client_no_context_takeover" }
        if let serverMaxWindowBits { value += "; server_max_window_bits=\(serverMaxWindowBits)" }
        value += clientMaxWindowBits.map { "; client_max_window_bits=\($0)" } ?? "; client_max_window_bits"
        return value
    }

    /// Why the offer cannot be sent (a window outside 8–15), or `nil` when it can.
    var problem: String? {
        for (name, bits) in [("server_max_window_bits", serverMaxWindowBits), ("client_max_window_bits", clientMaxWindowBits)] {
            if let bits, !Self.windowBitsRange.contains(bits) { return "\(name) is \(bits); RFC 7692 allows 8 to 15" }
        }
        return nil
    }

    /// The parameters the connection uses, from the server's answer to this offer; throws when
    /// the answer breaks RFC 7692 §7.1 or does not accept this offer: an unknown or repeated
    /// parameter, a value where none belongs or none where one does, a window outside 8–15 or
    /// larger than offered, `client_max_window_bits` when the offer had none, or no
    /// `server_no_context_takeover` when the offer asked for it.
    func accept(_ response: WebSocketExtension) throws(WebSocketHandshakeError) -> PerMessageDeflateParameters {
        func refuse(_ parameter: String, _ reason: String) -> WebSocketHandshakeError {
            .invalidExtensionParameter(extension: Self.extensionName, parameter: parameter, reason: reason)
        }
        var seen: Set<String> = []
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits: Int?
        var clientMaxWindowBits: Int?
        for parameter in response.parameters {
            guard seen.insert(parameter.name).inserted else { throw refuse(parameter.name, "it appears twice") }
            switch parameter.name {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard parameter.value == nil else { throw refuse(parameter.name, "it takes no value") }
                if parameter.name == "server_no_context_takeover" { serverNoContextTakeover = true } else { clientNoContextTakeover = true }
            case "server_max_window_bits", "client_max_window_bits":
                guard let text = parameter.value else { throw refuse(parameter.name, "a response must give it a value") }
                // 1*DIGIT without a leading zero: RFC 7692 §7.1.2 spells the values 8 to 15.
                guard text.utf8.first != UInt8(ascii: "0"), let bits = Int(text), Self.windowBitsRange.contains(bits) else {
                    throw refuse(parameter.name, "its value \"\(text)\" is not a window size from 8 to 15")
                }
                if parameter.name == "server_max_window_bits" { serverMaxWindowBits = bits } else { clientMaxWindowBits = bits }
            default:
                throw refuse(parameter.name, "RFC 7692 defines no such parameter")
            }
        }
        if self.serverNoContextTakeover, !serverNoContextTakeover {
            throw refuse("server_no_context_takeover", "the offer asked for it and the response leaves it out")
        }
        if let offered = self.serverMaxWindowBits {
            guard let chosen = serverMaxWindowBits else {
                throw refuse("server_max_window_bits", "the offer asked for at most \(offered) and the response leaves it out")
            }
            if chosen > offered { throw refuse("server_max_window_bits", "the response chose \(chosen), more than the \(offered) offered") }
        }
        if let offered = self.clientMaxWindowBits, let chosen = clientMaxWindowBits, chosen > offered {
            throw refuse("client_max_window_bits", "the response chose \(chosen), more than the \(offered) offered")
        }
        return PerMessageDeflateParameters(
            serverNoContextTakeover: serverNoContextTakeover,
            clientNoContextTakeover: clientNoContextTakeover || self.clientNoContextTakeover,
            serverMaxWindowBits: serverMaxWindowBits ?? 15,
            clientMaxWindowBits: clientMaxWindowBits ?? self.clientMaxWindowBits ?? 15)
    }
}

/// The permessage-deflate parameters a connection negotiated (RFC 7692 §7.1): how each side
/// compresses, which fixes how the other inflates.
struct PerMessageDeflateParameters: Sendable, Hashable {
    /// The server starts each message with an empty window: the client resets its inflater after each.
    var serverNoContextTakeover = false
    /// The client starts each message with an empty window: it resets its deflater after each.
    var clientNoContextTakeover = false
    /// The server's window is at most 2^bits bytes (8–15).
    var serverMaxWindowBits = 15
    /// The client's window must be at most 2^bits bytes (8–15).
    var clientMaxWindowBits = 15
}
