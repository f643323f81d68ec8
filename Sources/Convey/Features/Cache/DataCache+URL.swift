import Foundation

extension DataCache {
    /// The transport for `data(from:)` calls that name no server.
    private static let standardTransport = URLSessionTransport()

    /// The bytes at any http(s) URL, through this cache: images, files, any binary payload.
    ///
    /// The fetch is an ordinary Convey GET with `strategy`, so freshness, revalidation and
    /// `Vary` work as for tasks, and the returned response says where the bytes came from:
    ///
    /// ```swift
    /// let image = try await cache.data(from: avatarURL)
    /// if image.cacheStatus.isFromCache { … }
    /// let pngData = image.payload
    /// ```
    ///
    /// - Parameters:
    ///   - url: an absolute http or https URL; the query string is part of the cache key.
    ///   - strategy: how to use the cache. Default: `.localFirst`.
    ///   - server: a server whose configuration (headers, timeouts, echo) and transport to use;
    ///     its remote and its own cache are ignored. Default: a standard configuration and transport.
    /// - Throws: `ConveyError.invalidURL` for a URL that is not absolute http(s), and whatever the fetch throws.
    @ConveyActor
    public func data(from url: URL, strategy: CacheStrategy = .localFirst, server: ConveyServer? = nil) async throws -> ServerResponse<Data> {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var origin = URLComponents(url: url, resolvingAgainstBaseURL: true), origin.host != nil
        else { throw ConveyError.invalidURL(url.absoluteString, reason: "it is not an absolute http(s) URL") }
        var path = origin.percentEncodedPath
        if let query = origin.percentEncodedQuery { path += "?" + query }
        origin.percentEncodedPath = ""
        origin.percentEncodedQuery = nil
        origin.fragment = nil
        guard let originURL = origin.url else { throw ConveyError.invalidURL(url.absoluteString, reason: "its origin is not a URL") }

        var configuration = server?.configuration ?? ServerConfiguration()
        configuration.cache = self
        let fetcher = ConveyServer(remote: Remote(name: origin.host ?? "", url: originURL), configuration: configuration)
        fetcher.transport = server?.transport ?? Self.standardTransport
        return try await URLDataTask(server: fetcher, path: path, cacheStrategy: strategy).download()
    }
}

/// A GET of one URL, split into a server for its origin and a path with its query.
private struct URLDataTask: DataDownloadingTask {
    let server: ConveyServer
    let path: String
    let cacheStrategy: CacheStrategy
}
