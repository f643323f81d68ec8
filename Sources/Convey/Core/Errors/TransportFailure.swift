import Foundation

/// What kind of transport failure a `ConveyError.transport` is, as far as an app needs to tell
/// failures apart.
///
/// The kind is the contract: both built-in transports report the same fault as the same kind, and
/// `RetryPolicy` decides what is transient by it. The error's `code` and `reason` are the
/// transport's own detail, for the log.
public enum TransportFailure: String, Sendable, Hashable, CaseIterable {
    /// No connection could be made: the host name did not resolve, the server refused, no network.
    case cannotConnect
    /// The connection could not be secured: the TLS handshake failed or the certificate is not trusted.
    case secureConnectionFailed
    /// The connection broke before the whole response arrived: a reset, a close mid-answer,
    /// a body shorter than its `Content-Length`.
    case connectionLost
    /// The connection closed before any answer to a request that is not safe to repeat (POST,
    /// PATCH), where the transport would have sent it again; it was not. Whether the server
    /// acted on it is unknown.
    case notResent
    /// The server's answer was not valid HTTP: a bad status line, broken framing, a head that
    /// never ends, a body its `Content-Encoding` cannot decode.
    case malformedResponse
    /// The answer exceeded a size limit.
    case tooLarge
    /// A redirect Convey will not follow: too many of them, or to a scheme other than http and https.
    case redirectRefused
    /// The URL is not one Convey fetches: a scheme other than http and https.
    case unsupportedURL
    /// Anything else the transport reported.
    case other

    /// A sentence fit for a person (`ConveyError.userMessage`).
    var userMessage: String {
        switch self {
        case .cannotConnect: "Couldn't connect to the server. Check your connection and try again."
        case .secureConnectionFailed: "Couldn't make a secure connection to the server."
        case .connectionLost: "The connection to the server was lost. Please try again."
        case .notResent: "The connection was lost before the server answered, so it isn't known whether the request went through."
        case .malformedResponse: "The server sent an answer that couldn't be understood."
        case .tooLarge: "The server's answer was too large."
        case .redirectRefused: "The server sent the request on to an address that can't be opened."
        case .unsupportedURL: "This kind of address can't be opened."
        case .other: "Something went wrong while talking to the server. Please try again."
        }
    }

    /// What happened, for the log line.
    var logPhrase: String {
        switch self {
        case .cannotConnect: "Could not connect"
        case .secureConnectionFailed: "Could not secure the connection"
        case .connectionLost: "Connection lost"
        case .notResent: "Connection lost before the response; not resent"
        case .malformedResponse: "Malformed response"
        case .tooLarge: "Response too large"
        case .redirectRefused: "Redirect refused"
        case .unsupportedURL: "Unsupported URL"
        case .other: "Transport error"
        }
    }
}

extension TransportFailure {
    /// The kind of failure a `URLError` code stands for.
    init(urlErrorCode code: Int) {
        switch URLError.Code(rawValue: code) {
        case .cannotFindHost, .cannotConnectToHost, .dnsLookupFailed, .notConnectedToInternet,
             .internationalRoamingOff, .callIsActive, .dataNotAllowed, .cannotLoadFromNetwork:
            self = .cannotConnect
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
             .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            self = .secureConnectionFailed
        case .networkConnectionLost:
            self = .connectionLost
        case .badServerResponse, .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData, .zeroByteResource:
            self = .malformedResponse
        case .dataLengthExceedsMaximum:
            self = .tooLarge
        case .httpTooManyRedirects, .redirectToNonExistentLocation:
            self = .redirectRefused
        case .unsupportedURL, .badURL:
            self = .unsupportedURL
        default:
            self = .other
        }
    }
}
