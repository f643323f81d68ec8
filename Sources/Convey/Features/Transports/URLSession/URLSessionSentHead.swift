import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if os(Linux) && canImport(CConveyCurlShim)
internal import CCurl
#endif

/// A request's head as URLSession sent it, as far as it can be known, for a request that asks for
/// it (`TransportRequest.capturesSentHead`).
///
/// URLSession reports the request it sent (`currentRequest`: the fields Convey gave it, cookies
/// included) but not the fields it and the HTTP stack under it add. Those that are known are added
/// where they go:
/// - on every platform, `Host` (the URL's host, with its port when not the scheme's default),
///   unless the request has its own;
/// - on Linux, where FoundationNetworking drives libcurl (measured with Swift 6.3.1 and libcurl
///   7.88.1), each only when the request has none of that name: libcurl's `Accept: */*` and
///   `Accept-Encoding` (the codings the process's libcurl decodes: `deflate, gzip, br, zstd` there),
///   FoundationNetworking's `Connection: keep-alive`, `User-Agent` (`<process> (unknown version)
///   curl/<version>`) and `Accept-Language` (the current locale's language), its
///   `Content-Type:application/x-www-form-urlencoded` for a POST with a body, and libcurl's
///   `Content-Length` for every method but GET and HEAD (`0` without a body).
///
/// What is not known stays out: on Apple platforms the fields URLSession adds (`Accept`,
/// `Accept-Language`, `Accept-Encoding`, `Connection`, a `User-Agent` when there is none), whose
/// values the system chooses. The request's own fields are listed in the order Convey gave them,
/// repeats joined as URLSession joins them; URLSession sends them in the order of its dictionary.
/// The request line says the protocol URLSession reported, else `HTTP/1.1` for `http`, and none
/// for `https` on Linux, where libcurl may have negotiated HTTP/2 without saying so.
struct URLSessionSentHead: Sendable {
    /// The names of the request's fields in the order Convey gave them, each once.
    let fieldOrder: [String]
    /// The body's size in bytes, `nil` without a body.
    let bodyLength: Int64?

    /// The head for `request`, whose body is `bodyFile` or the request's own.
    init(_ request: TransportRequest) {
        var names: [String] = []
        for field in request.request.fields where !names.contains(where: { $0.equalsIgnoringASCIICase(field.name) }) {
            names.append(field.name)
        }
        fieldOrder = names
        if let file = request.bodyFile {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size]) as? NSNumber
            bodyLength = size?.int64Value
        } else {
            bodyLength = request.request.body.map { Int64($0.count) }
        }
    }

    /// The head's text: the request line and each field ended by CRLF, then an empty line.
    /// `sent` is the request URLSession reports, `httpVersion` the protocol it reported.
    func text(sent: URLRequest, httpVersion: String?) -> String {
        guard let url = sent.url else { return "" }
        let method = sent.httpMethod ?? "GET"
        let reported = sent.allHTTPHeaderFields ?? [:]
        func has(_ name: String) -> Bool { reported.keys.contains { $0.equalsIgnoringASCIICase(name) } }
        func line(_ name: String, _ value: String) -> String { value.isEmpty ? "\(name):" : "\(name): \(value)" }

        var path = url.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let query = url.query(percentEncoded: true) { path += "?" + query }
        let version = httpVersion ?? (url.scheme?.lowercased() == "https" && Self.leavesTLSProtocolUnreported ? nil : "HTTP/1.1")
        var lines = [[method, path, version].compactMap { $0 }.joined(separator: " ")]
        if !has("Host"), let host = url.host(percentEncoded: true) {
            let bracketed = host.contains(":") ? "[\(host)]" : host
            lines.append("Host: " + (url.port.map { "\(bracketed):\($0)" } ?? bracketed))
        }
        #if canImport(FoundationNetworking)
        if !has("Accept") { lines.append("Accept: */*") }
        if !has("Accept-Encoding"), let codings = Self.libcurlCodings { lines.append("Accept-Encoding: " + codings) }
        #endif
        let extra = reported.keys.filter { name in !fieldOrder.contains { $0.equalsIgnoringASCIICase(name) } }.sorted()
        for name in fieldOrder + extra {
            guard let value = reported.first(where: { $0.key.equalsIgnoringASCIICase(name) })?.value else { continue }
            lines.append(line(name, value))
        }
        #if canImport(FoundationNetworking)
        if !has("Connection") { lines.append("Connection: keep-alive") }
        if !has("User-Agent"), let agent = Self.foundationUserAgent { lines.append("User-Agent: " + agent) }
        if !has("Accept-Language"), let language = NSLocale.current.languageCode { lines.append("Accept-Language: " + language) }
        if method == "POST", !has("Content-Type"), (bodyLength ?? 0) > 0 { lines.append("Content-Type:application/x-www-form-urlencoded") }
        if method != "GET", method != "HEAD" { lines.append("Content-Length: \(bodyLength ?? 0)") }
        #endif
        return lines.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Whether the protocol of an `https` exchange goes unreported: on Linux, libcurl negotiates
    /// HTTP/2 or HTTP/1.1 and FoundationNetworking does not say which.
    private static var leavesTLSProtocolUnreported: Bool {
        #if canImport(FoundationNetworking)
        true
        #else
        false
        #endif
    }

    #if os(Linux) && canImport(CConveyCurlShim)
    /// The process's libcurl, which FoundationNetworking drives: its version and features.
    private static var libcurl: (version: UInt32, features: Int32)? {
        guard let info = curl_version_info(CURLVERSION_FIRST) else { return nil }
        return (info.pointee.version_num, info.pointee.features)
    }

    /// The codings libcurl asks for when told to accept all it decodes, in its order.
    private static let libcurlCodings: String? = libcurl.map { info in
        var codings: [String] = []
        if info.features & CURL_VERSION_LIBZ != 0 { codings += ["deflate", "gzip"] }
        if info.features & CURL_VERSION_BROTLI != 0 { codings.append("br") }
        if info.features & CURL_VERSION_ZSTD != 0 { codings.append("zstd") }
        return codings.joined(separator: ", ")
    }

    /// The `User-Agent` FoundationNetworking sends when a request has none.
    private static let foundationUserAgent: String? = libcurl.map { info in
        let version = "\(info.version >> 16).\((info.version >> 8) & 0xFF).\(info.version & 0xFF)"
        return "\(ProcessInfo.processInfo.processName) (unknown version) curl/\(version)"
    }
    #elseif canImport(FoundationNetworking)
    private static let libcurlCodings: String? = nil
    private static let foundationUserAgent: String? = nil
    #endif
}
