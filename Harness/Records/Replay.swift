@_spi(Tools) import Convey
import Foundation

/// What a record says to send, checked to be sendable as recorded.
struct Replay: Sendable {
    let record: RecordedTask
    let number: Int
    let method: HTTPMethod
    /// The recorded scheme, host and port.
    let origin: Remote
    /// The recorded path and query, percent-encoded as sent.
    let path: String
    let headers: Headers
    let body: RequestBody?

    init(record: RecordedTask, number: Int, overrides: Headers) throws(LocalFailure) {
        self.record = record
        self.number = number
        let refuse = { (reason: String) in LocalFailure(message: "record \(number) cannot be replayed: \(reason)") }
        guard let url = record.url, let split = RequestOptions.absoluteURL(url) else {
            throw refuse("it has no request URL (the attempt failed before a request was built)")
        }
        let maskedHeaders = Set(record.requestFields.filter { field in
            field.value.contains(Redaction.mask) && !overrides.contains { $0.name.lowercased() == field.name.lowercased() }
        }.map(\.name)).sorted()
        if !maskedHeaders.isEmpty {
            let names = maskedHeaders.joined(separator: ", ")
            throw refuse("its \(names) header\(maskedHeaders.count == 1 ? " was" : "s were") masked when recorded, and credentials are never stored. Give \(maskedHeaders.count == 1 ? "it" : "them") again, for example -H '\(maskedHeaders[0]): …'")
        }
        if url.contains(Redaction.mask) {
            throw refuse("a credential in its URL was masked when recorded, and credentials are never stored")
        }
        if record.requestBodySize > 0 || record.requestBody != nil {
            guard let data = record.requestBody else {
                throw refuse("its \(DisplayFormat.byteCount(record.requestBodySize)) body was not recorded (the recorder keeps no bodies, or it was streamed from a file)")
            }
            guard !record.requestBodyIsTruncated else { throw refuse("its body was cut at the recorder's body limit") }
            guard !record.redactedParts.contains("request body") else {
                throw refuse("a credential in its body was masked when recorded, and credentials are never stored")
            }
            body = RequestBody(data: data, contentType: nil)
        } else {
            body = nil
        }
        method = HTTPMethod(rawValue: record.method)
        origin = split.remote
        path = split.path
        var headers = Headers()
        headers.append(contentsOf: record.requestFields)
        headers.append(contentsOf: overrides)
        self.headers = headers
    }
}
