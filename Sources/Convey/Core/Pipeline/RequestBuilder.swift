import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the request for one attempt of a task: URL, method, layered headers, body, timeout.
@ConveyActor
enum RequestBuilder {
    /// The URL for a task: remote, path prefix and path joined, query parameters (sorted) then
    /// query items (in order) encoded. Only http and https, and only paths that stay under the
    /// remote's path and prefix.
    static func url(path: String, queryParameters: [String: String]?, queryItems: [URLQueryItem] = [], remote: Remote) throws -> URL {
        if Remote.climbsOutOfPrefix(path) {
            throw ConveyError.invalidURL(path, reason: "its \"..\" segments climb out of the remote's path prefix")
        }
        var text = remote.urlString(forPath: PercentEncoding.path(path))
        let query = PercentEncoding.query(queryParameters ?? [:], then: queryItems)
        if !query.isEmpty {
            text += (text.contains("?") ? "&" : "?") + query
        }
        return try recentURLs.url(for: text) { text in
            guard let url = URL(string: text), url.host != nil else {
                throw ConveyError.invalidURL(text, reason: "it is not an absolute URL with a host")
            }
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw ConveyError.invalidURL(text, reason: "only http and https URLs are sent")
            }
            return url
        }
    }

    /// The URLs built lately, by their text: a task builds the same URL run after run, and
    /// Foundation's parse is the costliest part of building one.
    private static let recentURLs = RecentURLs()

    /// The request for one attempt, before `willSendRequest`: to `absoluteURL` when the run has
    /// one (`OwnedAttemptTask`), else to the task's path under the server's remote.
    static func request<Task: DownloadingTask>(for task: Task, server: ConveyServer, body: RequestBody?, absoluteURL: URL?) async throws -> OutgoingRequest {
        let url: URL
        if let absoluteURL {
            url = absoluteURL
        } else {
            guard let remote = server.remote else { throw ConveyError.noRemote(server: server.name) }
            url = try Self.url(path: task.path, queryParameters: task.queryParameters, queryItems: task.queryItems, remote: remote)
        }
        let method = task.method
        if body != nil, method.forbidsBody {
            throw ConveyError.encodingFailed(
                subject: "the body of a \(method) request", reason: "\(method) requests cannot carry a body; use POST or PUT")
        }
        // The settings as they are before the task's headers are awaited; read one by one, never
        // by copying the whole configuration.
        let userAgent = server.configuration.userAgent ?? ServerConfiguration.standardUserAgent
        let defaultHeaders = server.configuration.defaultHeaders
        let gzipDownloads = server.configuration.enableGZipDownloads
        try FieldValidation.check(name: "User-Agent", value: userAgent, source: .userAgent)
        let taskHeaders = try await task.headers
        var headers = Headers()
        headers.reserveCapacity(4 + defaultHeaders.count + taskHeaders.count)
        headers.appendLine(Header(name: "User-Agent", value: userAgent))
        if !gzipDownloads { headers["Accept-Encoding"] = "identity" }
        try FieldValidation.check(defaultHeaders, source: .defaultHeaders)
        headers.append(contentsOf: defaultHeaders)
        if let contentType = body?.contentType {
            try FieldValidation.check(name: "Content-Type", value: contentType, source: .body)
            headers["Content-Type"] = contentType
        }
        if let contentEncoding = body?.contentEncoding {
            try FieldValidation.check(name: "Content-Encoding", value: contentEncoding, source: .body)
            headers["Content-Encoding"] = contentEncoding
        }
        try FieldValidation.check(taskHeaders, source: .taskHeaders)
        headers.append(contentsOf: taskHeaders)

        var request = OutgoingRequest(method: method, url: url, fields: headers)
        if case .data(let data) = body?.content { request.body = data }
        return request
    }

    /// `request` with the user and password of its URL moved into `Authorization: Basic` (unless
    /// it has an `Authorization` of its own, which wins) and taken out of the URL, so that every
    /// transport sends the same request and the URL carries no credential into logs, records or
    /// cache keys. A URL without userinfo is left as it is.
    static func movingUserInfoToAuthorization(_ request: OutgoingRequest) -> OutgoingRequest {
        // Most URLs carry no user info: skip parsing them again on every request.
        let url = request.url
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.percentEncodedUser != nil || components.percentEncodedPassword != nil else { return request }
        let credential = "\(components.user ?? ""):\(components.password ?? "")"
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        guard let stripped = components.url else { return request }
        var moved = request
        moved.url = stripped
        if moved.value(forHTTPHeaderField: "Authorization") == nil {
            moved.setValue("Basic " + Data(credential.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        return moved
    }

    /// Whether the task may use expensive and constrained networks: the task's choice, else the server's.
    static func networkAccess<Task: DownloadingTask>(for task: Task, server: ConveyServer) -> (expensive: Bool, constrained: Bool) {
        return (task.configuration?.allowsExpensiveNetworkAccess ?? server.configuration.allowsExpensiveNetworkAccess,
                task.configuration?.allowsConstrainedNetworkAccess ?? server.configuration.allowsConstrainedNetworkAccess)
    }

    /// The idle timeout of one attempt: the task's, else the server's, never below 1 ms.
    static func timeout<Task: DownloadingTask>(for task: Task, server: ConveyServer) -> Duration {
        (task.configuration?.timeout ?? server.configuration.defaultTimeout).clampedTimeout
    }
}

/// URLs by their text, at most `capacity` of them (all forgotten at once when full).
final class RecentURLs: @unchecked Sendable {
    private let lock = NSLock()
    private var table: [String: URL] = [:]
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The URL for `text`: a remembered one, or what `make` builds (remembered unless it throws).
    func url(for text: String, make: (String) throws -> URL) throws -> URL {
        if let known = lock.withLock({ table[text] }) { return known }
        let url = try make(text)
        lock.withLock {
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[text] = url
        }
        return url
    }
}
