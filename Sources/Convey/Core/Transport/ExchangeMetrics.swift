/// What one exchange cost on the wire: phase timings, bytes each way, protocol, TLS version,
/// connection reuse and whether the server's certificate was verified.
///
/// Each timing counts from the start of the exchange (as curl's `-w` reports them) and is `nil`
/// when the transport could not measure it, never zero by default. `CurlTransport` fills every
/// field from libcurl's transfer info; `URLSessionTransport` fills what task metrics provide
/// (little on Linux); a stub fills nothing. After redirects (each hop an exchange of its own),
/// a response's figures describe the last hop.
public struct ExchangeMetrics: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Time until the host name was resolved.
    public var nameLookup: Duration?
    /// Time until the TCP connection was up.
    public var connect: Duration?
    /// Time until the TLS handshake was done; `nil` for plain HTTP.
    public var tlsHandshake: Duration?
    /// Time until the first byte of the response arrived.
    public var firstByte: Duration?
    /// Time until the exchange was over.
    public var total: Duration?
    /// Request body bytes sent.
    public var bytesSent: Int64?
    /// Response body bytes received, as they came off the wire (before decompression).
    public var bytesReceived: Int64?
    /// The protocol the response came in, as a status line spells it: `HTTP/1.1`, `HTTP/2`.
    public var httpVersion: String?
    /// Whether the exchange went over a connection that was already open.
    public var reusedConnection: Bool?
    /// The TLS version of the connection, as the TLS library names it: `TLSv1.3`, `TLSv1.2`; `nil`
    /// for plain HTTP or when the transport cannot tell (`CurlTransport` tells with OpenSSL, the
    /// TLS library of Debian's and most distributions' libcurl).
    public var tlsVersion: String?
    /// Whether the server's certificate was verified: `false` when the request went out with
    /// `TLSConfiguration.disablesCertificateVerificationInsecurely`, which echo, records and the
    /// harness then show as `⚠ TLS verification OFF`; `nil` for plain HTTP or when not reported.
    public var certificateVerified: Bool?
    /// The request line and header fields as the transport sent them, each line ended by CRLF,
    /// then the empty line: `GET /get HTTP/1.1`, `Host: …`, `Accept: */*` and the rest, the
    /// fields the transport adds included. `nil` unless the request asked for it
    /// (`TransportRequest.capturesSentHead`) and the transport reports it: `CurlTransport` gives
    /// the bytes libcurl wrote; `URLSessionTransport` what URLSession reports with the fields it is
    /// known to add (see Docs/transports.md). Credentials are in it as sent, unmasked: it is never
    /// encoded (records, HAR) and not part of `description` or `isEmpty`.
    @_spi(Transport) public var sentHead: String?

    /// The figures an encoding keeps: all but `sentHead`.
    private enum CodingKeys: String, CodingKey {
        case nameLookup, connect, tlsHandshake, firstByte, total, bytesSent, bytesReceived, httpVersion, reusedConnection,
             tlsVersion, certificateVerified
    }

    /// Metrics with what a transport measured (`@_spi(Transport)`); nothing by default.
    @_spi(Transport) public init(nameLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil,
                firstByte: Duration? = nil, total: Duration? = nil, bytesSent: Int64? = nil, bytesReceived: Int64? = nil,
                httpVersion: String? = nil, reusedConnection: Bool? = nil, tlsVersion: String? = nil,
                certificateVerified: Bool? = nil) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.httpVersion = httpVersion
        self.reusedConnection = reusedConnection
        self.tlsVersion = tlsVersion
        self.certificateVerified = certificateVerified
    }

    /// Whether the transport measured nothing.
    public var isEmpty: Bool {
        var figures = self
        figures.sentHead = nil
        return figures == ExchangeMetrics()
    }

    /// One line, as echo and the harness print it: `dns 0.1 ms · connect 0.3 ms · tls 2.1 ms · first
    /// byte 3.2 ms · total 3.5 ms · ↑0 B ↓312 B · HTTP/2 · TLSv1.3 · new connection`, with `–` for
    /// what was not measured, and `⚠ TLS verification OFF` at the end when the certificate was not verified.
    public var description: String {
        func time(_ duration: Duration?) -> String { duration.map(DisplayFormat.duration) ?? "–" }
        func size(_ bytes: Int64?) -> String { bytes.map { DisplayFormat.byteCount($0) } ?? "–" }
        var parts = ["dns \(time(nameLookup))", "connect \(time(connect))", "tls \(time(tlsHandshake))",
                     "first byte \(time(firstByte))", "total \(time(total))", "↑\(size(bytesSent)) ↓\(size(bytesReceived))"]
        if let httpVersion { parts.append(httpVersion) }
        if let tlsVersion { parts.append(tlsVersion) }
        if let reusedConnection { parts.append(reusedConnection ? "reused" : "new connection") }
        if certificateVerified == false { parts.append(Self.verificationOffWarning) }
        return parts.joined(separator: " · ")
    }

    /// What echo, records and the harness print for an exchange whose certificate was not verified.
    @_spi(Tools) public static let verificationOffWarning = "⚠ TLS verification OFF"
}
