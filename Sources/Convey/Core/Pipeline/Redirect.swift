import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Convey's one redirect policy, which `RedirectStep` applies for every delivery and transport
/// (transports never follow redirects themselves): URLSession's rules.
///
/// 301, 302, 303 and 305–308 with a `Location` are followed, resolved against the request's URL;
/// a 303 turns any method but HEAD into a body-less GET, and a 301 or 302 turns POST into GET;
/// other methods keep their body (a body file is sent again). A target that is not http or https fails with `ConveyError.transport` of
/// kind `.redirectRefused`. Credentials set as headers (`CrossOriginCredentials`) are not sent
/// to another origin.
enum Redirect {
    /// How much of a redirect's body is read and dropped before its transfer is ended instead.
    static var discardedBodyLimit: Int { 64 * 1024 }

    /// Whether `head` is a redirect a run that follows redirects follows: a redirect status with
    /// a `Location` (a target that cannot be followed fails the hop when it is).
    static func isFollowed(_ head: ResponseHead) -> Bool {
        HTTPStatus.isRedirect(head.statusCode) && head.firstValue(named: "Location") != nil
    }

    /// The next hop of a redirect chain.
    struct Hop: Sendable {
        /// The request to send next.
        var request: OutgoingRequest
        /// Whether the body goes out again (307, 308, and 301/302 for methods other than POST):
        /// a body file is sent again only then.
        var resendsBody: Bool
    }

    /// Where `head` sends `request` next, or `nil` when it is the final response: not a
    /// redirect, or no usable `Location`. Throws
    /// `ConveyError.transport` of kind `.redirectRefused` for a target that is not http or https.
    /// `credentials` names the credential fields beyond the standard ones (the server's `redaction`).
    static func next(after head: ResponseHead, request: OutgoingRequest, credentials: Redaction) throws(ConveyError) -> Hop? {
        let url = request.url
        guard HTTPStatus.isRedirect(head.statusCode),
              let location = head.firstValue(named: "Location"),
              let target = URL(string: location, relativeTo: url)?.absoluteURL
        else { return nil }
        guard AllowedSchemes.allow(target) else { throw AllowedSchemes.refusedRedirect(from: url, to: target) }
        guard target.host != nil else { return nil }
        var next = request
        next.url = target
        let method = request.method
        let becomesGET = (head.statusCode == 303 && method != .head)
            || ((head.statusCode == 301 || head.statusCode == 302) && method == .post)
        if becomesGET {
            next.method = .get
            next.body = nil
            next.fields.remove(named: "Content-Type")
            next.fields.remove(named: "Content-Length")
        }
        CrossOriginCredentials.drop(from: &next, goingFrom: url, credentials: credentials)
        return Hop(request: next, resendsBody: !becomesGET)
    }

    /// The error for a chain longer than `limit` hops that started at `url`.
    static func tooMany(limit: Int, from url: URL?) -> ConveyError {
        ConveyError.transport(.redirectRefused, url: url, code: URLError.httpTooManyRedirects.rawValue,
                              reason: "more than \(limit) redirects (ServerConfiguration.maximumRedirects)")
    }
}
