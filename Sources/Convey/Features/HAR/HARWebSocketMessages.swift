import Foundation

/// A WebSocket's messages as a HAR capture keeps them for its entry's `_webSocketMessages`, the
/// field Chrome writes: each message's direction, time, opcode and data. Up to
/// `HARCaptureStep.bodyLimit` bytes of message data are kept; the rest is counted, not kept.
/// The connection tells it each message through the run's message taps (`WebSocketMessageTaps`).
final class HARWebSocketMessages: WebSocketMessageTap {
    private let limit: Int
    private let state = InlineLocked(Kept())

    /// One message as it went out or came in, not yet masked.
    struct Message: Sendable {
        var sent: Bool
        var date: Date
        var isText: Bool
        var data: Data
    }

    struct Kept: Sendable {
        var messages: [Message] = []
        var bytes = 0
        /// Messages past the limit, not kept.
        var dropped = 0
    }

    init(limit: Int = HARCaptureStep.bodyLimit) {
        self.limit = limit
    }

    func keep(_ message: WebSocketMessage, sent: Bool, at date: Date) {
        state.withLock { kept in
            guard kept.bytes + message.size <= limit else {
                kept.dropped += 1
                return
            }
            kept.bytes += message.size
            kept.messages.append(Message(sent: sent, date: date, isText: message.isText, data: message.bytes))
        }
    }

    /// What was kept so far.
    var kept: Kept { state.value }
}

extension HAREntry {
    /// A message of `_webSocketMessages`, as Chrome writes it: `type` `send` or `receive`, `time`
    /// in seconds since 1970, `opcode` 1 for text and 2 for binary, `data` the text (masked as
    /// bodies are) or the bytes in base64.
    struct WebSocketMessage: Sendable {
        var type: String
        var time: Double
        var opcode: Int
        var data: String
    }

    /// The messages `kept`, masked as `privacy` says.
    static func webSocketMessages(_ kept: HARWebSocketMessages.Kept, privacy: HARPrivacy) -> [WebSocketMessage] {
        kept.messages.map { message in
            let data = message.isText ? privacy.body(message.data, contentType: nil).text : message.data.base64EncodedString()
            return WebSocketMessage(type: message.sent ? "send" : "receive", time: message.date.timeIntervalSince1970,
                                    opcode: message.isText ? 1 : 2, data: data)
        }
    }

    /// Writes `_resourceType` and `_webSocketMessages`, for a WebSocket's entry.
    func writeWebSocket(to json: inout HARJSONWriter) {
        guard let webSocketMessages else { return }
        json.member("_resourceType", "websocket")
        json.key("_webSocketMessages")
        json.beginArray()
        for message in webSocketMessages {
            json.beginObject()
            json.member("type", message.type)
            // Seconds, to the millisecond: the form the writer gives milliseconds suits them as well.
            json.key("time")
            json.milliseconds(message.time)
            json.member("opcode", message.opcode)
            json.member("data", message.data)
            json.endObject()
        }
        json.endArray()
    }
}
