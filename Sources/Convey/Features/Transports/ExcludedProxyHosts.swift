import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The hosts a proxy is not used for (`ProxyConfiguration.http(…, excludedHosts:)`), read as
/// curl 7.88 reads `--noproxy` and `no_proxy`, so that both transports agree:
///
/// - `*` alone, or anywhere in the list: every host.
/// - A name (`example.com`, `.example.com`): that host and its subdomains, on a dot boundary
///   (`www.example.com` yes, `notexample.com` no), ignoring case and a leading or trailing dot.
/// - An IPv4 or IPv6 address (`10.0.0.1`, `::1`, `[::1]`), optionally with a prefix length
///   (`10.0.0.0/8`, `fd00::/8`): that address or that network. An address never matches a host
///   name that resolves to it, and a name never matches an address.
/// - The request's port never matters.
///
/// An entry curl would read differently or never match is refused, with the reason
/// (`ProxyConfiguration`'s requests then fail before anything is sent): one with a port
/// (`host:8080`), a wildcard inside a name (`*.example.com`, where curl wants `.example.com`),
/// a prefix length of 0 or beyond the address's size, an IPv6 prefix length that is not a
/// multiple of 8 (curl 7.88 misreads those), or characters no host name has.
struct ExcludedProxyHosts: Sendable, Hashable {
    /// One entry of the list.
    enum Entry: Sendable, Hashable {
        /// `*`: every host.
        case everyHost
        /// A domain: itself and its subdomains. Lowercased, without leading or trailing dots.
        case domain(String)
        /// An IPv4 address or network: its 4 bytes and prefix length (32 for one address).
        case ipv4([UInt8], prefix: Int)
        /// An IPv6 address or network: its 16 bytes and prefix length (128 for one address).
        case ipv6([UInt8], prefix: Int)
    }

    let entries: [Entry]

    /// Reads the list; throws `Refusal` for the first entry that is refused. Empty entries are skipped.
    init(_ list: [String]) throws(Refusal) {
        var entries: [Entry] = []
        for text in list {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            entries.append(try Self.entry(trimmed))
        }
        self.entries = entries
    }

    /// Why an entry is refused.
    struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        let entry: String
        let reason: String
        var description: String { "the excluded proxy host \(entry.debugDescription) \(reason)" }
    }

    /// Whether a request to `host` (a URL's host: a name, or an address, IPv6 with or without
    /// brackets) goes around the proxy.
    func excludes(host rawHost: String) -> Bool {
        guard !entries.isEmpty, !rawHost.isEmpty else { return false }
        if entries.contains(.everyHost) { return true }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        if let address = Self.ipv4(host) {
            return entries.contains { entry in
                if case .ipv4(let network, let prefix) = entry { return Self.matches(address, network, prefix: prefix) }
                return false
            }
        }
        if let address = Self.ipv6(host) {
            return entries.contains { entry in
                if case .ipv6(let network, let prefix) = entry { return Self.matches(address, network, prefix: prefix) }
                return false
            }
        }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return entries.contains { entry in
            guard case .domain(let domain) = entry else { return false }
            return name == domain || name.hasSuffix("." + domain)
        }
    }

    /// The list as `CURLOPT_NOPROXY` takes it, with the same meaning: `*` when any entry is one
    /// (curl reads `*` only alone), addresses without brackets.
    var curlList: String {
        if entries.contains(.everyHost) { return "*" }
        return entries.map { entry in
            switch entry {
            case .everyHost: "*"
            case .domain(let domain): domain
            case .ipv4(let bytes, let prefix): bytes.map(String.init).joined(separator: ".") + (prefix == 32 ? "" : "/\(prefix)")
            case .ipv6(let bytes, let prefix): Self.ipv6Text(bytes) + (prefix == 128 ? "" : "/\(prefix)")
            }
        }.joined(separator: ",")
    }

    // MARK: Reading entries

    private static func entry(_ text: String) throws(Refusal) -> Entry {
        if text == "*" { return .everyHost }
        var address = text
        var prefix: Int?
        if let slash = text.firstIndex(of: "/") {
            address = String(text[..<slash])
            guard let bits = Int(text[text.index(after: slash)...]), bits > 0 else {
                // curl reads `/0` as the address alone; `*` says "every host" plainly.
                throw Refusal(entry: text, reason: "has a prefix length that is not a number from 1 up")
            }
            prefix = bits
        }
        if address.hasPrefix("[") {
            guard address.hasSuffix("]") else {
                throw Refusal(entry: text, reason: "names a port: excluded hosts match a host on every port, so leave the port out")
            }
            address = String(address.dropFirst().dropLast())
        }
        if let bytes = ipv4(address) {
            let bits = prefix ?? 32
            guard bits <= 32 else { throw Refusal(entry: text, reason: "has a prefix length beyond 32 bits") }
            return .ipv4(bytes, prefix: bits)
        }
        if let bytes = ipv6(address) {
            let bits = prefix ?? 128
            guard bits <= 128 else { throw Refusal(entry: text, reason: "has a prefix length beyond 128 bits") }
            // curl 7.88 compares the bits of a partial byte the wrong way round.
            guard bits % 8 == 0 else { throw Refusal(entry: text, reason: "has an IPv6 prefix length that is not a multiple of 8, which curl misreads") }
            return .ipv6(bytes, prefix: bits)
        }
        guard prefix == nil else { throw Refusal(entry: text, reason: "has a prefix length but is not an IP address") }
        if address.contains(":") {
            throw Refusal(entry: text, reason: "names a port: excluded hosts match a host on every port, so leave the port out")
        }
        if address.contains("*") {
            throw Refusal(entry: text, reason: "has a wildcard: write .example.com (or example.com) for a domain and its subdomains, * alone for every host")
        }
        var domain = address.lowercased()
        while domain.hasPrefix(".") { domain.removeFirst() }
        while domain.hasSuffix(".") { domain.removeLast() }
        guard !domain.isEmpty, domain.unicodeScalars.allSatisfy(isHostCharacter) else {
            throw Refusal(entry: text, reason: "is not a host name, an IP address or *")
        }
        return .domain(domain)
    }

    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "0"..."9", "-", ".", "_": true
        default: scalar.value > 0x7F
        }
    }

    // MARK: Addresses

    /// The 4 bytes of a dotted IPv4 address, as `inet_pton` (and so curl) reads it, or `nil`.
    static func ipv4(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// The 16 bytes of an IPv6 address, as `inet_pton` reads it, or `nil`.
    static func ipv6(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    private static func ipv6Text(_ bytes: [UInt8]) -> String {
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the first `prefix` bits of `address` and `network` are equal.
    private static func matches(_ address: [UInt8], _ network: [UInt8], prefix: Int) -> Bool {
        guard address.count == network.count else { return false }
        let whole = prefix / 8, rest = prefix % 8
        guard address[..<whole] == network[..<whole] else { return false }
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return address[whole] & mask == network[whole] & mask
    }
}
