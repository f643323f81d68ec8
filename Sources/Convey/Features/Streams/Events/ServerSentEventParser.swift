import Foundation

/// Parses the `text/event-stream` format as the WHATWG HTML standard defines it
/// ("Server-sent events", §9.2.6), from bytes that arrive in arbitrary pieces.
///
/// Lines end at CR, LF or CRLF; a leading byte order mark is dropped; lines starting with `:`
/// are comments; `data`, `event`, `id` and `retry` are the fields (others are ignored); a blank
/// line dispatches the event, and an event without data is dropped. An unfinished event when the
/// stream ends is dropped. The last event ID and the retry time outlive an event, and a connection.
struct ServerSentEventParser {
    /// The last `id:` the server set, without NUL; what `Last-Event-ID` carries on reconnecting.
    private(set) var lastEventID = ""
    /// The last valid `retry:` value, in milliseconds.
    private(set) var retryMilliseconds: Int?

    private var splitter: LineSplitter
    private let maximumEventSize: Int
    private var url: URL?
    private var data: [UInt8] = []
    private var eventType = ""
    private var lastEventIDBuffer = ""
    /// Bytes of a possible byte order mark at the start of a connection, until it is settled.
    private var streamStart: [UInt8]? = []

    /// A parser whose events' data (and lines) may be at most `maximumEventSize` bytes, resuming
    /// after `lastEventID` (`""`: from the start).
    init(maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize, lastEventID: String = "", url: URL? = nil) {
        self.maximumEventSize = maximumEventSize
        self.lastEventID = lastEventID
        lastEventIDBuffer = lastEventID
        self.url = url
        splitter = LineSplitter(endings: .anyNewline, maximumLineLength: maximumEventSize, url: url)
    }

    /// The largest event accepted by default: 1 MiB of data.
    static var defaultMaximumEventSize: Int { 1 << 20 }

    /// Starts a new connection to `url`: drops any unfinished event; keeps the last event ID and retry.
    mutating func beginConnection(url: URL?) {
        self.url = url
        splitter = LineSplitter(endings: .anyNewline, maximumLineLength: maximumEventSize, url: url)
        data.removeAll(keepingCapacity: true)
        eventType = ""
        streamStart = []
    }

    /// Parses `bytes`, calling `event` for each event they complete. Throws
    /// `ConveyError.responseTooLarge` when an event's data passes the size limit.
    mutating func feed(_ bytes: Data, event: (ServerSentEvent) throws -> Void) throws {
        var bytes = bytes
        if var start = streamStart {
            // A UTF-8 byte order mark at the start, possibly split across pieces, is not part of the stream.
            let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
            let taken = bytes.prefix(mark.count - start.count)
            start.append(contentsOf: taken)
            let rest = bytes.dropFirst(taken.count)
            if start.count < mark.count, start[...] == mark.prefix(start.count) {
                streamStart = start
                return
            }
            streamStart = nil
            bytes = start == mark ? Data(rest) : Data(start) + rest
        }
        // The splitter is moved out while it runs, so its buffer stays uniquely owned.
        var splitter = self.splitter
        self.splitter = LineSplitter(endings: .anyNewline, maximumLineLength: 0, url: nil)
        defer { self.splitter = splitter }
        try splitter.split(bytes) { line in try process(line, event: event) }
    }

    private mutating func process(_ line: ArraySlice<UInt8>, event: (ServerSentEvent) throws -> Void) throws {
        guard let first = line.first else {
            try dispatch(event)
            return
        }
        if first == UInt8(ascii: ":") { return }
        let name: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            name = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            name = line
            value = []
        }
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            guard data.count + value.count + 1 <= maximumEventSize else {
                throw ConveyError.responseTooLarge(limit: Int64(maximumEventSize), url: url, isHead: false)
            }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id":
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                // Digits beyond what an Int holds: the longest wait there is.
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self)) ?? Int.max
            }
        default:
            break
        }
    }

    private mutating func dispatch(_ event: (ServerSentEvent) throws -> Void) throws {
        lastEventID = lastEventIDBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            eventType = ""
        }
        guard !data.isEmpty else { return }
        let text = String(decoding: data.dropLast(), as: UTF8.self)
        try event(ServerSentEvent(type: eventType.isEmpty ? "message" : eventType, data: text, id: lastEventID, url: url))
    }
}
