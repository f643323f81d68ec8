import Foundation

/// What the outbox refuses or reports of its own: an enqueue it will not store, an item that
/// ended without delivery for a reason of the outbox's, or a folder it cannot use.
///
/// A failed item's error is an `HTTPError` for a status the outbox does not retry, a
/// `ConveyError` for a transport failure that would only happen again (an untrusted certificate,
/// say), or one of these cases.
public enum OutboxFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The task set a credential (`Authorization`, `Cookie`, an API key or token field, URL user
    /// info, a credential query parameter) itself. Items never store credentials: they come from
    /// the server's `headers(for:)` when each attempt is sent. `field` names what was refused.
    case credentialRefused(field: String)
    /// An enqueue would pass one of the outbox's limits (`Outbox.Configuration`): `limit` names
    /// it, `maximum` is its value.
    case limitReached(limit: String, maximum: Int64)
    /// Every attempt the retry policy allows failed; `lastError` is the last one's, masked.
    case attemptsExhausted(attempts: Int, lastError: String)
    /// The item was still not delivered when its expiry passed; `lastError` is the last attempt's, masked.
    case expired(lastError: String?)
    /// The item failed with an error whose type did not survive a restart; the text says what it was.
    case notDelivered(String)
    /// The folder or one of its files could not be read or written (a full disk, permissions).
    case storage(String)
    /// Another process owns the folder: it is delivering or changing items. Enqueueing and
    /// reading need no ownership; delivering, retrying and dropping do.
    case folderInUse(String)
    /// No item has this ID.
    case unknownItem(String)

    /// A sentence fit to show a person.
    public var userMessage: String? {
        switch self {
        case .credentialRefused, .limitReached, .storage: "The request couldn't be saved for sending later."
        case .attemptsExhausted, .expired, .notDelivered: "The request couldn't be delivered."
        case .folderInUse: "Another copy of the app is sending queued requests."
        case .unknownItem: "The queued request no longer exists."
        }
    }

    /// `logDetail`.
    public var description: String { logDetail }

    /// What went wrong, credentials masked with `Redaction.standard`.
    public var logDetail: String {
        Redaction.standard.maskedText(unmaskedDetail)
    }

    private var unmaskedDetail: String {
        switch self {
        case .credentialRefused(let field):
            "Refused to enqueue: the task sets the credential \(field) itself. Outbox items never store credentials; "
                + "the server's headers(for:) supplies them when each attempt is sent (and the harness's `outbox run -H`)"
        case .limitReached(let limit, let maximum):
            "Refused to enqueue: the outbox would pass its \(limit) limit of \(maximum)"
        case .attemptsExhausted(let attempts, let lastError):
            "Not delivered after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(lastError)"
        case .expired(let lastError):
            "Not delivered before its expiry passed" + (lastError.map { "; last error: \($0)" } ?? "")
        case .notDelivered(let message):
            "Not delivered: \(message)"
        case .storage(let message):
            "Outbox storage failed: \(message)"
        case .folderInUse(let message):
            "Outbox folder in use: \(message)"
        case .unknownItem(let id):
            "No outbox item \(id)"
        }
    }
}
