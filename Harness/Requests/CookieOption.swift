import Foundation

/// `-b/--cookie DATA|FILE`, as curl reads it: an argument with `=` is cookie text sent as it is
/// (`name=value; other=value`); one without names a file of cookies in Netscape format (what
/// curl's `-c` and browsers' exports write), whose cookies for the request's host and path are
/// sent. Every `-b` adds to one `Cookie` field. Cookies are credentials: neither they nor the
/// argument are ever printed.
enum CookieOption {
    /// The largest cookie file read.
    private static let largestFile = 1 << 20

    /// The `Cookie` value for `arguments`, sent to `url`, and a warning for each file that could not be read.
    static func header(_ arguments: [String], for url: URL?, now: Date = Date()) -> (value: String?, warnings: [String]) {
        var cookies: [String] = []
        var warnings: [String] = []
        for argument in arguments {
            if argument.contains("=") {
                cookies.append(argument.trimmingCharacters(in: .whitespaces))
            } else if let text = read(argument) {
                cookies += fileCookies(text, for: url, now: now)
            } else {
                // The argument is not repeated: a cookie mistyped without its `=` is a secret.
                warnings.append("-b: an argument without '=' names a cookie file, and that file cannot be read: no cookies from it")
            }
        }
        let value = cookies.filter { !$0.isEmpty }.joined(separator: "; ")
        return (value.isEmpty ? nil : value, warnings)
    }

    private static func read(_ path: String) -> String? {
        guard !path.isEmpty, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: largestFile + 1), data.count <= largestFile else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The `name=value` of each cookie in a Netscape cookie file that goes to `url`: its domain and
    /// path match, it has not expired, and a secure one goes over https or to the machine itself
    /// (a loopback host is a secure context, as curl and browsers take it).
    static func fileCookies(_ text: String, for url: URL?, now: Date) -> [String] {
        guard let url, let host = url.host()?.lowercased() else { return [] }
        let path = url.path(percentEncoded: true).isEmpty ? "/" : url.path(percentEncoded: true)
        let loopback = host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        let secure = url.scheme?.lowercased() == "https" || loopback
        var cookies: [String] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = Substring(rawLine)
            if line.hasPrefix("#HttpOnly_") { line = line.dropFirst("#HttpOnly_".count) } else if line.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7 else { continue }
            let domain = fields[0].lowercased().trimmingPrefix(".")
            let includesSubdomains = fields[1].uppercased() == "TRUE" || fields[0].hasPrefix(".")
            guard host == domain || (includesSubdomains && host.hasSuffix("." + domain)) else { continue }
            guard pathMatches(path, cookiePath: fields[2]) else { continue }
            guard !(fields[3].uppercased() == "TRUE" && !secure) else { continue }
            if let expires = Double(fields[4]), expires > 0, expires < now.timeIntervalSince1970 { continue }
            cookies.append("\(fields[5])=\(fields[6])")
        }
        return cookies
    }

    /// RFC 6265 §5.1.4: the cookie's path is the request's, or a prefix of it ending at a `/`.
    private static func pathMatches(_ path: String, cookiePath: String) -> Bool {
        let cookiePath = cookiePath.isEmpty ? "/" : cookiePath
        guard path.hasPrefix(cookiePath) else { return false }
        return path.count == cookiePath.count || cookiePath.hasSuffix("/") || path.dropFirst(cookiePath.count).hasPrefix("/")
    }
}
