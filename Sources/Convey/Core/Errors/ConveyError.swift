import Foundation

/// Every failure Convey reports other than an HTTP status (`HTTPError`): what went wrong, as a
/// case to switch on, with where and why as its values.
///
/// ```swift
/// do {
///     try await task.send()
/// } catch ConveyError.transport(.cannotConnect, _, _, _) {
///     // offline, or the server is down
/// } catch ConveyError.attemptTimedOut(let limit, _) {
///     print("no data for \(limit)")
/// } catch let error as ConveyError {
///     show(error.userMessage)        // nil for cancellation
///     log(error.logDetail)           // what, where and why, credentials masked
/// }
/// ```
///
/// Errors thrown by your own hooks reach the caller unchanged.
public enum ConveyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The task's URL could not be built. Carries the text that failed and why.
    case invalidURL(String, reason: String)
    /// There is nowhere to send the task: the server has no `remote`, or the task names no
    /// `server` and no default server was ever made (`server` is then
    /// `ConveyServer.missingDefaultName`). Nothing was sent; `logDetail` says which, and the fix.
    case noRemote(server: String)
    /// The server is disabled (`disabled = true`); nothing was sent.
    case serverDisabled(server: String)
    /// The `-fail-all-requests` launch argument is set; nothing was sent.
    case requestsDisabledForDebugging
    /// The transport failed: no connection, a reset, a TLS failure, a malformed or oversized
    /// answer, a refused redirect. The first value says which; `code` is the `URLError` code (or
    /// the transport's own) and `reason` the transport's description, for the log.
    case transport(TransportFailure, url: URL?, code: Int, reason: String)
    /// One attempt waited longer than the task's timeout (`limit`) for data. Retrying may help.
    case attemptTimedOut(limit: Duration, url: URL?)
    /// The task as a whole, retries included, ran past its total timeout (`limit`).
    case totalTimedOut(limit: Duration, url: URL?)
    /// The task was cancelled. A normal outcome, never shown to a person as an error.
    case cancelled
    /// The request body could not be encoded or read; nothing was sent. `subject` is what was
    /// being encoded (a payload type, a form field, a multipart part); `reason` says why, with the
    /// coding path where there is one.
    case encodingFailed(subject: String, reason: String)
    /// A request header field's name is not a token or its value holds CR, LF or NUL (RFC 9110
    /// §5), so that it could end the header line early and smuggle in another; nothing was sent.
    /// `name` is the field's name as given, `source` where it came from ("the task's headers",
    /// "the request willSendRequest returned", …); the value is never carried. The request line
    /// is held to the same rule: a method that is not a token, or a target holding a control
    /// character or a space, is reported under HTTP/2's names for them, `:method` and `:path`.
    case invalidHeaderField(name: String, source: String, reason: String)
    /// The response body could not be decoded into the task's payload type (`typeName`).
    /// `codingPath` is the place in the JSON, such as `users[2].email` (empty at the top level),
    /// and `bodyPrefix` the first characters of the body (at most 512), credentials masked.
    case decodingFailed(typeName: String, codingPath: String, reason: String, bodyPrefix: String, url: URL?)
    /// A `.localOnly` task found no stored response it may use (nothing stored, a stored
    /// response that varies on another header value, one that must be revalidated…); nothing was sent.
    case notCached(url: URL?, reason: String)
    /// The disk cache folder could not be opened, created or written (`DataCache(folder:)`).
    case cacheFolderUnavailable(folder: URL?, reason: String)
    /// The response was larger than the limit set for it, in bytes; the transfer was stopped
    /// there. `isHead` says the status line and header fields were too large, rather than the
    /// body (counted after decompression).
    case responseTooLarge(limit: Int64, url: URL?, isHead: Bool)
    /// A download to a file could not be written, verified or put in place; the destination is untouched.
    case downloadFailed(destination: URL, reason: String)
    /// No entry of the HAR fixtures' `file` answers this request (`HARFixtures` replaying): `request`
    /// is its method and masked URL (`GET https://api.example.com/users?page=2`), `reason` what
    /// came closest. Never retried: the file will not answer it the next time either.
    case noRecordedAnswer(request: String, file: String, reason: String)
    /// A HAR file could not be read (missing, a link, not a regular file, over the size limit),
    /// is not HAR that Convey reads (`location` names the place, such as
    /// `log.entries[3].response.content.text`), or could not be written (then nothing in it changed).
    case harFileUnusable(path: String, location: String?, reason: String)
    /// An `Outbox` refused to enqueue a task that sets a credential (`Authorization`, `Cookie`,
    /// an API key or token field, URL user info, a credential query parameter) itself: items
    /// never store credentials; the server's `headers(for:)` supplies them when each attempt is
    /// sent. `field` names what was refused.
    case credentialRefused(field: String)
    /// An enqueue would pass one of the outbox's limits (`Outbox.Configuration`): `limit` names
    /// it, `maximum` is its value.
    case outboxLimitReached(limit: String, maximum: Int64)
    /// Every attempt the outbox's retry policy allows failed; `lastError` is the last one's, masked.
    case attemptsExhausted(attempts: Int, lastError: String)
    /// The outbox item was still not delivered when its expiry passed; `lastError` is the last attempt's, masked.
    case expired(lastError: String?)
    /// The outbox item failed with an error whose type did not survive a restart; the text says what it was.
    case notDelivered(String)
    /// The outbox folder or one of its files could not be read or written (a full disk, permissions).
    case outboxStorageFailed(String)
    /// Another process owns the outbox folder: it is delivering or changing items. Enqueueing and
    /// reading need no ownership; delivering, retrying and dropping do.
    case outboxFolderInUse(String)
    /// No outbox item has this ID.
    case unknownOutboxItem(String)
    /// A WebSocket could not open, or ended without the close handshake: the first value says
    /// how (`WebSocketFailure`), `closeCode` is the close code the client sent when it closed the
    /// connection for it (1006 when the connection ended without a close frame; `nil` when no
    /// connection was open), `reason` the detail, for the log. A status other than 101 in answer
    /// to the handshake is the task's `HTTPError`, as for any task.
    case webSocket(WebSocketFailure, url: URL?, closeCode: Int?, reason: String)

    /// A sentence fit to show a person, or `nil` for cancellation, which is never shown as an error.
    public var userMessage: String? {
        switch self {
        case .invalidURL, .encodingFailed, .invalidHeaderField: "The request couldn't be prepared."
        case .noRemote(ConveyServer.missingDefaultName): "The app isn't set up to reach its server yet."
        case .noRemote: "The app has no server address to send this to."
        case .serverDisabled: "This service is currently unavailable."
        case .requestsDisabledForDebugging: "Network requests are disabled for debugging."
        case .transport(let failure, _, _, _): failure.userMessage
        case .attemptTimedOut, .totalTimedOut: "The server took too long to answer. Please try again."
        case .cancelled: nil
        case .decodingFailed: "The server's answer couldn't be read."
        case .notCached: "This content isn't available offline."
        case .cacheFolderUnavailable: "The cache couldn't be opened."
        case .responseTooLarge: "The server's answer was too large."
        case .downloadFailed: "The download couldn't be saved."
        case .noRecordedAnswer: "This request has no recorded answer."
        case .harFileUnusable: "The recorded exchanges couldn't be read or written."
        case .credentialRefused, .outboxLimitReached, .outboxStorageFailed: "The request couldn't be saved for sending later."
        case .attemptsExhausted, .expired, .notDelivered: "The request couldn't be delivered."
        case .outboxFolderInUse: "Another copy of the app is sending queued requests."
        case .unknownOutboxItem: "The queued request no longer exists."
        case .webSocket(let failure, _, _, _): failure.userMessage
        }
    }

    /// Everything a developer needs in one log line: what failed, where and why, credentials
    /// masked with `Redaction.standard`.
    public var logDetail: String {
        Redaction.standard.maskedText(unmaskedLogDetail)
    }

    /// `logDetail`.
    public var description: String { logDetail }

    private var unmaskedLogDetail: String {
        switch self {
        case .invalidURL(let text, let reason): "Invalid URL \"\(text)\": \(reason)"
        case .noRemote(ConveyServer.missingDefaultName):
            "No default server: the task names no `server`, so it runs on `ConveyServer.default`, and no server was made "
                + "with `asDefault: true` before it ran. Make one first: `ConveyServer(remote: …, asDefault: true)`, or a subclass "
                + "whose initializer calls `super.init(asDefault: true)`; a `static let shared = AppServer()` is made only when first "
                + "read, so touch it (`_ = AppServer.shared`) before the first task"
        case .noRemote(let server):
            "\(server) has no remote: set its `remote` (in its initializer, or `server.remote = …`) before running tasks"
        case .serverDisabled(let server): "\(server) is disabled: the task was not sent"
        case .requestsDisabledForDebugging: "-fail-all-requests is set: the task was not sent"
        case .transport(let failure, let url, let code, let reason):
            "\(failure.logPhrase) for \(Self.text(url)): \(reason) (code \(code))"
        case .attemptTimedOut(let limit, let url): "Timed out (attempt limit \(DisplayFormat.duration(limit))) for \(Self.text(url))"
        case .totalTimedOut(let limit, let url): "Timed out (total limit \(DisplayFormat.duration(limit))) for \(Self.text(url))"
        case .cancelled: "Cancelled"
        case .encodingFailed(let subject, let reason): "Could not encode \(subject): \(reason)"
        case .invalidHeaderField(let name, let source, let reason):
            "Header field \(name.debugDescription) from \(source) was not sent: \(reason)"
        case .decodingFailed(let typeName, let codingPath, let reason, let bodyPrefix, let url):
            "Could not decode \(typeName)\(codingPath.isEmpty ? "" : " at \(codingPath)") from \(Self.text(url)): \(reason). Body starts: \(bodyPrefix)"
        case .notCached(let url, let reason): "Not in the cache: \(Self.text(url)) (\(reason))"
        case .cacheFolderUnavailable(let folder, let reason): "Cache folder unavailable: \(folder?.path ?? "?") (\(reason))"
        case .responseTooLarge(let limit, let url, let isHead):
            "Response \(isHead ? "head" : "body") from \(Self.text(url)) exceeded the limit of \(limit) bytes; the transfer was stopped"
        case .downloadFailed(let destination, let reason): "Download to \(destination.path) failed: \(reason)"
        case .noRecordedAnswer(let request, let file, let reason):
            // No colon right after the URL: the masking rule would read it as part of the URL.
            "No entry in \(file) answers \(request) — \(reason)"
        case .harFileUnusable(let path, let location?, let reason): "\(path) is not a HAR file Convey can read: \(location): \(reason)"
        case .harFileUnusable(let path, nil, let reason): "The HAR file \(path) could not be used: \(reason)"
        case .credentialRefused(let field):
            "Refused to enqueue: the task sets the credential \(field) itself. Outbox items never store credentials; "
                + "the server's headers(for:) supplies them when each attempt is sent (and the harness's `outbox run -H`)"
        case .outboxLimitReached(let limit, let maximum): "Refused to enqueue: the outbox would pass its \(limit) limit of \(maximum)"
        case .attemptsExhausted(let attempts, let lastError): "Not delivered after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(lastError)"
        case .expired(let lastError): "Not delivered before its expiry passed" + (lastError.map { "; last error: \($0)" } ?? "")
        case .notDelivered(let message): "Not delivered: \(message)"
        case .outboxStorageFailed(let message): "Outbox storage failed: \(message)"
        case .outboxFolderInUse(let message): "Outbox folder in use: \(message)"
        case .unknownOutboxItem(let id): "No outbox item \(id)"
        case .webSocket(let failure, let url, let closeCode?, let reason):
            "\(failure.logPhrase) for \(Self.text(url)): \(reason) (close code \(closeCode))"
        case .webSocket(let failure, let url, nil, let reason): "\(failure.logPhrase) for \(Self.text(url)): \(reason)"
        }
    }

    private static func text(_ url: URL?) -> String { url?.absoluteString ?? "?" }
}

extension ConveyError {
    /// A transport failure whose kind follows from a `URLError` code.
    static func transport(urlErrorCode code: Int, reason: String, url: URL?) -> ConveyError {
        .transport(TransportFailure(urlErrorCode: code), url: url, code: code, reason: reason)
    }
}

extension Error {
    /// Whether this error only reports that the work was cancelled: a normal outcome, not a failure.
    public var isCancellation: Bool {
        if self is CancellationError { return true }
        if let error = self as? ConveyError, case .cancelled = error { return true }
        return false
    }

    /// A message fit to show a person, or `nil` for cancellation, which is never shown as an error.
    public var displayMessage: String? {
        if isCancellation { return nil }
        if let error = self as? ConveyError { return error.userMessage }
        if let error = self as? HTTPError { return error.userMessage }
        return "Something went wrong. Please try again."
    }
}
