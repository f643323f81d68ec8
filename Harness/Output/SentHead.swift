@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// A request's head as the transport reported sending it (`ExchangeMetrics.sentHead`): the request
/// line and every field, those the transport added included, in order. Unmasked: mask before showing.
struct SentHead: Sendable, Equatable {
    /// `GET /get?page=2 HTTP/1.1`.
    let requestLine: String
    /// The fields in the order sent, repeats kept.
    let fields: [Header]

    /// The head in `text` (CRLF or LF line ends, up to the empty line), or `nil` when it has no request line.
    init?(_ text: String) {
        // A CRLF is one Character, a line break like LF.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        if let end = lines.firstIndex(where: \.isEmpty) { lines.removeSubrange(end...) }
        guard let first = lines.first else { return nil }
        requestLine = String(first)
        fields = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return Header(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }
}

extension Redaction {
    /// Fields masked as `maskedFields(_:)` masks them, each kept where it is.
    func masked(_ fields: [Header]) -> [Header] {
        fields.flatMap { maskedFields([$0]) }
    }
}
