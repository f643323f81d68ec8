import Foundation

extension RecordedTask {
    /// The encoder records are stored with: pretty-printed, sorted keys, ISO 8601 dates.
    public static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// The decoder that reads stored records.
    public static func makeJSONDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Records as JSON text exactly as they are stored: one record, or a list such as
    /// `TaskRecorder.records()` returns.
    public static func jsonText(_ records: some Encodable) throws -> String {
        String(decoding: try makeJSONEncoder().encode(records), as: UTF8.self)
    }
}
