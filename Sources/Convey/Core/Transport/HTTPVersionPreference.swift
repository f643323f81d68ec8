/// Which HTTP version a transport asks for.
public enum HTTPVersionPreference: String, Sendable, Hashable, CaseIterable {
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise. The default.
    case automatic
    /// HTTP/1.1 only, even when the server offers HTTP/2.
    case http1_1
    /// HTTP/2 from the first byte, without asking: cleartext `h2c` with prior knowledge on
    /// `http`, HTTP/2 without fallback on `https`. Only for servers known to speak it.
    case http2PriorKnowledge
    /// HTTP/3 (QUIC) when the libcurl the process runs has it, with fallback to the others;
    /// the same as `automatic` when it has not (see `CurlTransport.supportsHTTP3`).
    case http3
}
