import Foundation

/// Every failure Convey reports other than an HTTP status (`HTTPError`).
///
/// Errors thrown by your own hooks reach the caller unchanged.
public enum ConveyError: PresentableError, Sendable {
    /// The task's URL could not be built. Carries the text that failed and why.
    case invalidURL(String, reason: String)
    /// The server has no `remote`, so there is nowhere to send the task.
    case noRemote(server: String)
    /// The server is disabled (`disabled = true`); nothing was sent.
    case serverDisabled(server: String)
    /// The `-fail-all-requests` launch argument is set; nothing was sent.
    case requestsDisabledForDebugging
    /// The transport failed: no connection, a reset, a TLS failure, a malformed or oversized
    /// answer, a refused redirect. `TransportFailure.kind` says which.
    case transport(TransportFailure)
    /// An attempt waited longer than its timeout, or the task ran past its total timeout.
    case timedOut(TimeoutFailure)
    /// The task was cancelled. A normal outcome, never shown to a person as an error.
    case cancelled
    /// The request body could not be encoded or read; nothing was sent.
    case encodingFailed(EncodingFailure)
    /// A request header field's name is not a token or its value holds CR, LF or NUL; nothing was sent.
    case invalidHeaderField(HeaderFieldFailure)
    /// The response body could not be decoded into the task's payload type.
    case decodingFailed(DecodingFailure)
    /// The cache could not answer a `.localOnly` task, or its folder could not be opened.
    case cache(CacheFailure)
    /// The response was larger than the limit set for it; the transfer was stopped there.
    case responseTooLarge(SizeLimitFailure)
    /// A download to a file could not be written, verified or put in place; the destination is untouched.
    case downloadFailed(DownloadFailure)

    public var userMessage: String? {
        switch self {
        case .invalidURL, .noRemote, .encodingFailed, .invalidHeaderField: "The request couldn't be prepared."
        case .serverDisabled: "This service is currently unavailable."
        case .requestsDisabledForDebugging: "Network requests are disabled for debugging."
        case .transport(let failure): failure.kind.userMessage
        case .timedOut: "The server took too long to answer. Please try again."
        case .cancelled: nil
        case .decodingFailed: "The server's answer couldn't be read."
        case .cache(let failure): failure.kind == .notCached ? "This content isn't available offline." : "The cache couldn't be opened."
        case .responseTooLarge: "The server's answer was too large."
        case .downloadFailed: "The download couldn't be saved."
        }
    }

    /// What failed, where and why, credentials masked with `Redaction.standard`.
    public var logDetail: String {
        Redaction.standard.maskedText(unmaskedLogDetail)
    }

    private var unmaskedLogDetail: String {
        switch self {
        case .invalidURL(let text, let reason): "Invalid URL \"\(text)\": \(reason)"
        case .noRemote(let server): "\(server) has no remote: set `remote` before running tasks"
        case .serverDisabled(let server): "\(server) is disabled: the task was not sent"
        case .requestsDisabledForDebugging: "-fail-all-requests is set: the task was not sent"
        case .transport(let failure): failure.description
        case .timedOut(let failure): failure.description
        case .cancelled: "Cancelled"
        case .encodingFailed(let failure): failure.description
        case .invalidHeaderField(let failure): failure.description
        case .decodingFailed(let failure): failure.description
        case .cache(let failure): failure.description
        case .responseTooLarge(let failure): failure.description
        case .downloadFailed(let failure): failure.description
        }
    }
}

/// Which timeout fired, and where.
public struct TimeoutFailure: Sendable, Hashable, CustomStringConvertible {
    /// Which limit was exceeded.
    public enum Kind: String, Sendable, Hashable {
        /// One attempt waited longer than the task's timeout for data.
        case attempt
        /// The task as a whole ran past its total timeout.
        case total
    }

    /// Which limit was exceeded.
    public let kind: Kind
    /// The limit that was exceeded.
    public let limit: Duration
    /// The URL being fetched.
    public let url: URL?

    /// Creates a timeout failure.
    public init(kind: Kind, limit: Duration, url: URL?) {
        self.kind = kind
        self.limit = limit
        self.url = url
    }

    /// What happened, credentials in the URL masked with `Redaction.standard`.
    public var description: String {
        Redaction.standard.maskedText("Timed out (\(kind.rawValue) limit \(DisplayFormat.duration(limit))) for \(url?.absoluteString ?? "?")")
    }
}

/// Why a request body could not be produced.
public struct EncodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// What was being encoded: a payload type, a form field, a multipart part.
    public let subject: String
    /// Why it failed, including the coding path where there is one.
    public let reason: String

    /// Creates an encoding failure.
    public init(subject: String, reason: String) {
        self.subject = subject
        self.reason = reason
    }

    /// What happened, credentials masked with `Redaction.standard`.
    public var description: String { Redaction.standard.maskedText("Could not encode \(subject): \(reason)") }
}

/// Why a response body did not decode, with the place in the JSON and the start of the body.
public struct DecodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// The type being decoded.
    public let typeName: String
    /// The coding path to the failing value, such as `users[2].email`; empty at the top level.
    public let codingPath: String
    /// What went wrong at that place.
    public let reason: String
    /// The first characters of the body (at most 512), for the log, credentials masked with `Redaction.standard`.
    public let bodyPrefix: String
    /// The URL the body came from.
    public let url: URL?

    /// Creates a decoding failure.
    public init(typeName: String, codingPath: String, reason: String, bodyPrefix: String, url: URL?) {
        self.typeName = typeName
        self.codingPath = codingPath
        self.reason = reason
        self.bodyPrefix = bodyPrefix
        self.url = url
    }

    /// What happened, credentials in the URL and the body masked with `Redaction.standard`.
    public var description: String {
        let place = codingPath.isEmpty ? "" : " at \(codingPath)"
        return Redaction.standard.maskedText(
            "Could not decode \(typeName)\(place) from \(url?.absoluteString ?? "?"): \(reason). Body starts: \(bodyPrefix)")
    }
}

/// Which size limit a response exceeded, and where.
public struct SizeLimitFailure: Sendable, Hashable, CustomStringConvertible {
    /// What was too large.
    public enum Part: String, Sendable, Hashable {
        /// The body, counted after decompression.
        case body
        /// The status line and header fields.
        case head
    }

    /// What was too large.
    public let part: Part
    /// The limit, in bytes.
    public let limit: Int64
    /// The URL being fetched.
    public let url: URL?

    /// Creates a size-limit failure.
    public init(part: Part, limit: Int64, url: URL?) {
        self.part = part
        self.limit = limit
        self.url = url
    }

    /// What happened, credentials in the URL masked with `Redaction.standard`.
    public var description: String {
        Redaction.standard.maskedText(
            "Response \(part.rawValue) from \(url?.absoluteString ?? "?") exceeded the limit of \(limit) bytes; the transfer was stopped")
    }
}

/// Why a download to a file failed, and where.
public struct DownloadFailure: Sendable, Hashable, CustomStringConvertible {
    /// The file the download was going to.
    public let destination: URL
    /// What went wrong.
    public let reason: String

    /// Creates a download failure.
    public init(destination: URL, reason: String) {
        self.destination = destination
        self.reason = reason
    }

    /// What happened, credentials in the reason masked with `Redaction.standard`.
    public var description: String { Redaction.standard.maskedText("Download to \(destination.path) failed: \(reason)") }
}
