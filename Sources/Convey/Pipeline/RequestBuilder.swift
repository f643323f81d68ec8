import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the request for one attempt of a task: URL, method, layered headers, body, timeout.
@ConveyActor
enum RequestBuilder {
    /// The URL for a task: remote, path prefix and path joined, query parameters (sorted) then
    /// query items (in order) encoded.
    static func url(path: String, queryParameters: [String: String]?, queryItems: [URLQueryItem] = [], remote: Remote) throws -> URL {
        var text = remote.urlString(forPath: PercentEncoding.path(path))
        let query = PercentEncoding.query(queryParameters ?? [:], then: queryItems)
        if !query.isEmpty {
            text += (text.contains("?") ? "&" : "?") + query
        }
        guard let url = URL(string: text), url.host != nil else {
            throw ConveyError.invalidURL(text, reason: "it is not an absolute URL with a host")
        }
        return url
    }

    /// The request for one attempt, before `willSendRequest`.
    static func request<Task: DownloadingTask>(for task: Task, server: ConveyServer, body: RequestBody?) async throws -> URLRequest {
        guard let remote = server.remote else { throw ConveyError.noRemote(server: server.name) }
        let url = try url(path: task.path, queryParameters: task.queryParameters, queryItems: task.queryItems, remote: remote)
        let method = task.method
        if body != nil, method.forbidsBody {
            throw ConveyError.encodingFailed(EncodingFailure(
                subject: "the body of a \(method) request", reason: "\(method) requests cannot carry a body; use POST or PUT"))
        }
        let configuration = server.configuration

        var headers: Headers = ["User-Agent": configuration.userAgent ?? ServerConfiguration.standardUserAgent]
        if !configuration.enableGZipDownloads { headers["Accept-Encoding"] = "identity" }
        headers.append(contentsOf: configuration.defaultHeaders)
        if let contentType = body?.contentType { headers["Content-Type"] = contentType }
        if let contentEncoding = body?.contentEncoding { headers["Content-Encoding"] = contentEncoding }
        headers.append(contentsOf: try await task.headers)

        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: timeout(for: task, server: server).timeInterval)
        if method != .get { request.httpMethod = method.rawValue }
        // One assignment: on Linux each `setValue(_:forHTTPHeaderField:)` rescans and renormalises every field.
        request.allHTTPHeaderFields = headers.dictionary
        if case .data(let data) = body?.content { request.httpBody = data }
        return request
    }

    /// Whether the task may use expensive and constrained networks: the task's choice, else the server's.
    static func networkAccess<Task: DownloadingTask>(for task: Task, server: ConveyServer) -> (expensive: Bool, constrained: Bool) {
        let configuration = server.configuration
        return (task.configuration?.allowsExpensiveNetworkAccess ?? configuration.allowsExpensiveNetworkAccess,
                task.configuration?.allowsConstrainedNetworkAccess ?? configuration.allowsConstrainedNetworkAccess)
    }

    /// The idle timeout of one attempt: the task's, else the server's, never below 1 ms.
    static func timeout<Task: DownloadingTask>(for task: Task, server: ConveyServer) -> Duration {
        (task.configuration?.timeout ?? server.configuration.defaultTimeout).clampedTimeout
    }
}
