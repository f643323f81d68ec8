import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The redirects the cache follows itself for the GET and HEAD requests it handles, so that a
/// permanent redirect (301, 308; RFC 9110 §15.4) is stored under its own URL like any response
/// and followed from the cache next time, without asking the server.
///
/// 301, 302, 303, 307 and 308 with a usable `Location` are followed; GET and HEAD keep their
/// method (a 303 changes nothing for them). Credentials set as headers (`CrossOriginCredentials`)
/// are not sent to another origin, as the transports do when they follow redirects themselves.
enum CacheRedirect {
    /// The most hops followed before the request fails, as `CurlTransport` allows by default.
    static let maximumHops = 20

    private static let followedStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The request for the next hop after `head` answered `request`, or `nil` when `head` is final;
    /// `credentials` names the credential fields beyond the standard ones.
    static func next(after head: ResponseHead, request: OutgoingRequest, credentials: Redaction = .standard) -> OutgoingRequest? {
        guard followedStatuses.contains(head.statusCode), let location = head.fields.first(named: "Location"),
              case let current = request.url, let target = URL(string: location, relativeTo: current)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }
        var next = request
        next.url = target
        CrossOriginCredentials.drop(from: &next, goingFrom: current, credentials: credentials)
        return next
    }
}
