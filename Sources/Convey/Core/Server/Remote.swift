import Foundation

/// A named environment a server can talk to, such as development, staging or production.
///
/// A remote is a base URL plus an optional path prefix shared by every task, for example
/// `https://api.example.com` with prefix `v2`. Define your environments once:
///
/// ```swift
/// extension Remote {
///     static let staging = Remote(name: "staging", url: URL(string: "https://staging.example.com")!, pathPrefix: "api/v2")
/// }
/// ```
public struct Remote: Sendable, Hashable, CustomStringConvertible {
    /// A short name for logs and the harness, such as "dev" or "production".
    public var name: String
    /// The base URL: scheme, host, optional port and optional path.
    public var url: URL
    /// A path every task's path is placed under, such as "api/v2". Slashes at either end are ignored.
    public var pathPrefix: String

    /// Creates a remote from a base URL and an optional path prefix.
    public init(name: String, url: URL, pathPrefix: String = "") {
        self.name = name
        self.url = url
        self.pathPrefix = pathPrefix
    }

    /// Creates a remote from a URL string; `nil` when the string is not an absolute http(s) URL.
    public init?(name: String, string: String, pathPrefix: String = "") {
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host != nil else { return nil }
        self.init(name: name, url: url, pathPrefix: pathPrefix)
    }

    /// The URL string for a task path: base, prefix and path joined by exactly one slash each.
    ///
    /// A trailing slash on `path` is kept, since servers may treat `/a` and `/a/` differently.
    public func urlString(forPath path: String) -> String {
        var result = url.absoluteString
        while result.hasSuffix("/") { result.removeLast() }
        let prefix = pathPrefix.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed()
        if !prefix.isEmpty { result += "/" + String(prefix) }
        let taskPath = path.drop { $0 == "/" }
        if !taskPath.isEmpty { result += "/" + taskPath }
        return result
    }

    /// Whether a task path leaves the remote's base path and prefix once its dot segments are
    /// resolved (RFC 3986 §5.2.4), as servers and libcurl resolve them: `../admin` or
    /// `a/../../admin` does, `a/../b` does not. `%2E` counts as a dot. Only the part before `?`
    /// or `#` is a path.
    static func climbsOutOfPrefix(_ path: String) -> Bool {
        // Byte by byte, without an array of segments or Character comparisons: this runs for
        // every request.
        let bytes = path.utf8
        var depth = 0
        var segmentStart = bytes.startIndex
        var index = bytes.startIndex
        while true {
            let atEnd = index == bytes.endIndex || bytes[index] == UInt8(ascii: "?") || bytes[index] == UInt8(ascii: "#")
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                switch dotCount(of: bytes[segmentStart..<index]) {
                case 0: if segmentStart != index { depth += 1 }
                case 1: break
                default:
                    depth -= 1
                    if depth < 0 { return true }
                }
                if atEnd { return false }
                segmentStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
    }

    /// How many dots `segment` is, with `%2E` as a dot: 1 for `.`, 2 for `..`, otherwise 0.
    private static func dotCount(of segment: Substring.UTF8View) -> Int {
        var bytes = segment
        var dots = 0
        while let first = bytes.first {
            if first == UInt8(ascii: ".") {
                bytes = bytes.dropFirst()
            } else if first == UInt8(ascii: "%"), bytes.count >= 3,
                      bytes.dropFirst().first == UInt8(ascii: "2"),
                      bytes.dropFirst(2).first.map({ $0 | 0x20 }) == UInt8(ascii: "e") {
                bytes = bytes.dropFirst(3)
            } else {
                return 0
            }
            dots += 1
            if dots > 2 { return 0 }
        }
        return dots
    }

    /// The name and the joined base URL, for logs, credentials masked with `Redaction.standard`.
    public var description: String { "\(name) (\(Redaction.standard.maskedText(urlString(forPath: ""))))" }
}
