import Foundation

/// Convey's JSON defaults. Fixed and documented, so that every server and task agrees on
/// dates, keys and data unless it says otherwise. Reached by apps through
/// `ServerConfiguration`'s `defaultEncoder` and `defaultDecoder`; usable from inline code so that
/// public default arguments can make them.
@usableFromInline
enum JSONCoding {
    /// An encoder writing ISO 8601 dates with fractional seconds (`2026-01-31T12:00:00.000Z`),
    /// keys as declared (no snake_case conversion), sorted keys, and base64 for `Data`.
    @usableFromInline
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(iso8601WithFractionalSeconds))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A decoder reading ISO 8601 dates with or without fractional seconds, keys as declared
    /// (no snake_case conversion), and base64 for `Data`.
    @usableFromInline
    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? iso8601WithFractionalSeconds.parse(text) { return date }
            if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Expected an ISO 8601 date, found \"\(text.prefix(40))\".")
        }
        return decoder
    }

    private static let iso8601WithFractionalSeconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
