import Foundation

/// One event from a `text/event-stream` response, as the app reads it.
///
/// ```swift
/// for try await event in PriceFeed().events() where event.type == "price" {
///     let price = try event.decoded(as: Price.self)
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: its `event:` field, or `"message"` when it had none.
    public var type: String
    /// The event's data: its `data:` lines joined with `\n`.
    public var data: String
    /// The last event ID the server set (`id:`), on this event or an earlier one; `""` when none.
    /// Sent back as `Last-Event-ID` when the reader reconnects.
    public var id: String
    /// The URL of the stream the event came from.
    public var url: URL?

    /// Creates an event.
    public init(type: String = "message", data: String, id: String = "", url: URL? = nil) {
        self.type = type
        self.data = data
        self.id = id
        self.url = url
    }

    /// The data decoded from JSON as `type`. Throws `ConveyError.decodingFailed` with the coding
    /// path, the start of the data and the stream's URL when it does not fit.
    public func decoded<Payload: Decodable>(
        as type: Payload.Type = Payload.self, using decoder: JSONDecoder = JSONCoding.makeDecoder()
    ) throws -> Payload {
        try PayloadDecoding.decode(type, from: Data(data.utf8), using: decoder, url: url)
    }
}
