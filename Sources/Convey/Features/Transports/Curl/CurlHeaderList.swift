#if os(Linux) && canImport(CConveyCurlShim)
internal import CCurl

/// The header lines a handle hands libcurl (`CURLOPT_HTTPHEADER`), kept from one transfer to the
/// next: a task's requests mostly carry the same fields each time, and building the list anew
/// costs two allocations a line.
///
/// Owned by its handle, so touched by one party at a time (see `CurlEasyHandle`).
final class CurlHeaderList {
    /// Lines Convey adds to a request's own fields.
    struct Extras: OptionSet, Equatable {
        let rawValue: UInt8
        /// `Accept-Encoding: gzip, deflate`, when the request names no coding.
        static let acceptEncoding = Extras(rawValue: 1 << 0)
        /// `Content-Type:` (none), so that curl does not label a body form-encoded.
        static let blankContentType = Extras(rawValue: 1 << 1)
        /// `Expect:` (none): no `100-continue` round trip.
        static let blankExpect = Extras(rawValue: 1 << 2)
    }

    private var list: UnsafeMutablePointer<curl_slist>?
    private var fields: Headers?
    private var extras = Extras()

    deinit {
        if let list { curl_slist_free_all(list) }
    }

    /// The list for `fields` (in order, repeats as separate lines, `Content-Length` left to curl)
    /// and `extras`: the last one when they are the same.
    func list(for fields: Headers, extras: Extras) -> UnsafeMutablePointer<curl_slist>? {
        if self.fields == fields, self.extras == extras { return list }
        if let list { curl_slist_free_all(list) }
        var built: UnsafeMutablePointer<curl_slist>?
        func append(_ line: String) {
            built = line.withCString { curl_slist_append(built, $0) } ?? built
        }
        if extras.contains(.blankContentType) { append("Content-Type:") }
        if extras.contains(.blankExpect) { append("Expect:") }
        for field in fields where !field.name.equalsIgnoringASCIICase("Content-Length") {
            append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        if extras.contains(.acceptEncoding) { append("Accept-Encoding: gzip, deflate") }
        list = built
        self.fields = fields
        self.extras = extras
        return built
    }
}
#endif
