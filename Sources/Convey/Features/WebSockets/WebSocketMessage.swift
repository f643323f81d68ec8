import Foundation

/// One WebSocket message, whole: text or binary, however many frames it came in.
///
/// ```swift
/// for try await message in connection.messages {
///     switch message {
///     case .text(let text): print(text)
///     case .binary(let data): save(data)
///     }
/// }
/// ```
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message, checked as UTF-8 as it arrived.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message's size in bytes: its UTF-8 for text.
    var size: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }

    /// The message's bytes: UTF-8 for text.
    var bytes: Data {
        switch self {
        case .text(let text): Data(text.utf8)
        case .binary(let data): data
        }
    }

    /// Whether it is a text message.
    var isText: Bool {
        if case .text = self { return true }
        return false
    }
}
