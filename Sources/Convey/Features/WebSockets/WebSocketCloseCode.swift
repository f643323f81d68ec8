/// A WebSocket close code (RFC 6455 §7.4): why an endpoint closed the connection.
///
/// Which codes may travel in a close frame follows IANA's "WebSocket Close Code Number Registry":
/// 1000–1003 and 1007–1014 are assigned, 3000–4999 belong to libraries and applications; 1004 is
/// reserved, 1005, 1006 and 1015 only ever describe a closure locally, and everything else is
/// unassigned, so a peer that sends one breaks the protocol.
struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code's number.
    var rawValue: UInt16

    /// A close code with this number, valid on the wire or not.
    init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1000: the purpose of the connection was fulfilled.
    static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (a server shutting down, a client's task cancelled).
    static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: the endpoint cannot accept this type of data.
    static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: the peer's close frame carried no code. Never sent.
    static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame. Never sent.
    static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a message's data was not what its type says (text that is not UTF-8).
    static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: the message broke the endpoint's policy.
    static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message was too big to process.
    static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client wanted an extension the server did not negotiate.
    static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met an unexpected condition.
    static let internalServerError = WebSocketCloseCode(rawValue: 1011)
    /// 1015: the TLS handshake failed. Never sent.
    static let tlsHandshake = WebSocketCloseCode(rawValue: 1015)

    /// Whether a close frame may carry this code: assigned by IANA's registry (1000–1003,
    /// 1007–1014) or in the range for libraries and applications (3000–4999).
    var isValidOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The number and, for a code IANA assigned, its name: `1002 (protocol error)`.
    var description: String {
        let name: String? = switch rawValue {
        case 1000: "normal closure"
        case 1001: "going away"
        case 1002: "protocol error"
        case 1003: "unsupported data"
        case 1005: "no status received"
        case 1006: "abnormal closure"
        case 1007: "invalid frame payload data"
        case 1008: "policy violation"
        case 1009: "message too big"
        case 1010: "mandatory extension"
        case 1011: "internal server error"
        case 1012: "service restart"
        case 1013: "try again later"
        case 1014: "bad gateway"
        case 1015: "TLS handshake"
        default: nil
        }
        return name.map { "\(rawValue) (\($0))" } ?? "\(rawValue)"
    }
}
