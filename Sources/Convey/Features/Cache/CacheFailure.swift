import Foundation

/// Why the cache could not answer or could not be opened, and where.
public struct CacheFailure: Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// A `.localOnly` task found no stored response it may use; nothing was sent.
        case notCached
        /// The disk cache folder could not be created or written.
        case folderUnavailable
    }

    /// What went wrong.
    public let kind: Kind
    /// The URL asked for, or the cache folder.
    public let url: URL?
    /// Why, in words: nothing stored, the stored response varies on another header value, it is stale and must be revalidated…
    public let reason: String

    /// Creates a cache failure.
    public init(kind: Kind, url: URL?, reason: String) {
        self.kind = kind
        self.url = url
        self.reason = reason
    }

    public var description: String {
        let text = switch kind {
        case .notCached: "Not in the cache: \(url?.absoluteString ?? "?") (\(reason))"
        case .folderUnavailable: "Cache folder unavailable: \(url?.path ?? "?") (\(reason))"
        }
        return Redaction.standard.maskedText(text)
    }
}
