@_spi(Transport) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A tiny httpbin inside the process, answering through a `StubTransport`: the demo and manual
/// runs work with no network and no server.
///
/// Endpoints, as httpbin has them: `/get`, `/post`, `/put`, `/patch`, `/delete` and `/anything…`
/// echo the request as JSON; `/headers`; `/status/N`; `/etag/E` (answers `If-None-Match` with
/// 304); `/delay/S` (honours the attempt timeout and cancellation); `/bytes/N`;
/// `/drip?numbytes=N&duration=S` (reports progress as it goes).
enum EmbeddedHTTPBin {
    /// Where the embedded server lives. `.invalid` never resolves, so nothing can leak onto a network.
    static let remote = Remote(name: "embedded", string: "http://embedded.invalid") ?? Remote(name: "embedded", url: URL(filePath: "/"))

    private static let largestBody = 10_000_000
    private static let longestDelay = 10.0

    /// Answers one request the way httpbin would.
    @Sendable
    static func respond(to request: TransportRequest) async throws -> TransportResponse {
        let url = request.request.url
        let method = request.request.method.rawValue
        let segments = url.path(percentEncoded: false).split(separator: "/").map(String.init)
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        switch segments.first ?? "" {
        case "get", "post", "put", "patch", "delete":
            guard segments.count == 1 else { return try notFound(url) }
            guard method.lowercased() == segments[0] else { return try text(url, status: 405, "Method Not Allowed") }
            return try json(url, try echo(request, url: url))
        case "anything":
            return try json(url, try echo(request, url: url))
        case "headers":
            return try json(url, ["headers": requestHeaders(request, bodySize: 0)])
        case "status":
            guard segments.count == 2, let code = Int(segments[1]), (100...599).contains(code) else {
                return try text(url, status: 400, "Invalid status code")
            }
            return TransportResponse(url: url, statusCode: code, headers: baseHeaders(contentType: "text/html; charset=utf-8", length: 0))
        case "etag":
            guard segments.count == 2 else { return try notFound(url) }
            return try etag(request, url: url, tag: segments[1])
        case "delay":
            guard segments.count == 2, let seconds = Double(segments[1]), seconds.isFinite, seconds >= 0 else { return try notFound(url) }
            try await wait(min(seconds, longestDelay), within: request.timeout)
            return try json(url, try echo(request, url: url))
        case "bytes":
            guard segments.count == 2, let count = Int(segments[1]), count >= 0 else { return try notFound(url) }
            return try bytes(url, count: min(count, largestBody))
        case "drip":
            let count = min(max(0, Int(value("numbytes", in: query) ?? "10") ?? 10), largestBody)
            let seconds = min(max(0, Double(value("duration", in: query) ?? "2") ?? 2), longestDelay)
            return try await drip(request, url: url, count: count, seconds: seconds)
        default:
            return try notFound(url)
        }
    }

    /// The httpbin echo: args, data, files, form, headers, json, method, origin, url.
    private static func echo(_ request: TransportRequest, url: URL) throws -> [String: Any] {
        let body = try requestBody(request)
        let contentType = request.request.value(forHTTPHeaderField: "Content-Type")
        let parsed = EchoedBody(body, contentType: contentType)
        var args: [String: String] = [:]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] { args[item.name] = item.value ?? "" }
        return [
            "args": args, "data": parsed.data, "files": parsed.files, "form": parsed.form,
            "headers": requestHeaders(request, bodySize: body.count), "json": parsed.json ?? NSNull(),
            "method": request.request.method.rawValue, "origin": "127.0.0.1", "url": url.absoluteString,
        ]
    }

    private static func requestBody(_ request: TransportRequest) throws -> Data {
        if let file = request.bodyFile { return try Data(contentsOf: file) }
        return request.request.body ?? Data()
    }

    /// The request's headers as a server sees them, with `Host` and `Content-Length` added.
    private static func requestHeaders(_ request: TransportRequest, bodySize: Int) -> [String: String] {
        var headers = request.request.allHTTPHeaderFields
        headers["Host"] = request.request.url.host ?? "embedded.invalid"
        if bodySize > 0 { headers["Content-Length"] = String(bodySize) }
        return headers
    }

    private static func etag(_ request: TransportRequest, url: URL, tag: String) throws -> TransportResponse {
        let quoted = "\"\(tag)\""
        let candidates = (request.request.value(forHTTPHeaderField: "If-None-Match") ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if candidates.contains(quoted) || candidates.contains(tag) || candidates.contains("*") {
            var headers = baseHeaders(contentType: nil, length: 0)
            headers["ETag"] = quoted
            return TransportResponse(url: url, statusCode: 304, headers: headers)
        }
        return try json(url, try echo(request, url: url), extraHeaders: ["ETag": quoted])
    }

    /// Waits like a slow server; when the attempt's timeout comes first, fails as a transport would.
    private static func wait(_ seconds: Double, within timeout: Duration) async throws {
        let delay = Duration.milliseconds(Int64(seconds * 1000))
        if delay > timeout {
            try await Task.sleep(for: timeout)
            throw URLError(.timedOut)
        }
        try await Task.sleep(for: delay)
    }

    private static func bytes(_ url: URL, count: Int) throws -> TransportResponse {
        let body = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        return TransportResponse(url: url, headers: baseHeaders(contentType: "application/octet-stream", length: count), body: body)
    }

    /// Sends `count` bytes over `seconds` in 20 steps, reporting progress like a real transfer.
    private static func drip(_ request: TransportRequest, url: URL, count: Int, seconds: Double) async throws -> TransportResponse {
        let steps = 20
        request.progress?(TransferProgress(totalBytesToReceive: Int64(count)))
        for step in 1...steps {
            try await wait(seconds / Double(steps), within: request.timeout)
            request.progress?(TransferProgress(bytesReceived: Int64(count * step / steps), totalBytesToReceive: Int64(count)))
        }
        let body = Data(repeating: UInt8(ascii: "*"), count: count)
        return TransportResponse(url: url, headers: baseHeaders(contentType: "application/octet-stream", length: count), body: body)
    }

    private static func json(_ url: URL, _ object: [String: Any], extraHeaders: [String: String] = [:]) throws -> TransportResponse {
        let body = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let headers = baseHeaders(contentType: "application/json", length: body.count).merging(extraHeaders) { $1 }
        return TransportResponse(url: url, headers: headers, body: body)
    }

    private static func text(_ url: URL, status: Int, _ message: String) throws -> TransportResponse {
        let body = Data((message + "\n").utf8)
        return TransportResponse(url: url, statusCode: status, headers: baseHeaders(contentType: "text/plain; charset=utf-8", length: body.count), body: body)
    }

    private static func notFound(_ url: URL) throws -> TransportResponse {
        try text(url, status: 404, "Not Found: the embedded server knows /get /post /put /patch /delete /anything /headers /status/N /etag/E /delay/S /bytes/N /drip")
    }

    private static func baseHeaders(contentType: String?, length: Int) -> [String: String] {
        var headers = ["Content-Length": String(length), "Server": "convey-harness embedded httpbin"]
        headers["Content-Type"] = contentType
        return headers
    }

    private static func value(_ name: String, in items: [URLQueryItem]) -> String? {
        items.last { $0.name == name }?.value
    }
}
