import Foundation

extension Redaction {
    /// The URL as text with the values of hidden query parameters replaced by `mask`, as echo
    /// output and recordings show it.
    public func maskedURL(_ url: URL) -> String {
        EchoFormatter(style: .consoleFull, redaction: self).redactedURL(url)
    }

    /// The header fields with the values of hidden headers replaced by `mask`.
    public func maskedHeaders(_ headers: [String: String]) -> [String: String] {
        headers.reduce(into: [:]) { result, field in
            result[field.key] = hidesHeader(field.key) ? Self.mask : field.value
        }
    }
}
