#if canImport(CConveyCurlShim)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's redirect policy, applied by `CurlTransport` itself (curl's own following would
/// keep a custom method such as PUT across a 303).
///
/// 301, 302, 303 and 305–308 with a `Location` are followed; a 303 turns any method but HEAD
/// into a body-less GET, and a 301 or 302 turns POST into GET; other methods keep their body.
/// Credentials set as headers (`CrossOriginCredentials`) are not sent to another origin.
enum CurlRedirect {
    /// The next hop of a redirect chain.
    struct Hop {
        var request: URLRequest
        var url: URL
        /// Whether the body goes out again (307, 308, and 301/302 for methods other than POST).
        var resendsBody: Bool
    }

    static func isRedirect(status: Int) -> Bool {
        HTTPStatus.isRedirect(status)
    }

    /// Where `response` sends `request` next, or `nil` when it is the final response: not a
    /// redirect, no usable `Location`, or a body that cannot be sent twice (a stream). Throws
    /// `ConveyError.transport` of kind `.redirectRefused` for a target that is not http or https.
    static func nextHop(after response: ResponseHead, request: URLRequest, url: URL,
                        credentials: Redaction = .standard) throws(ConveyError) -> Hop? {
        guard isRedirect(status: response.statusCode),
              let location = response.fields.first(named: "Location"),
              let target = URL(string: location, relativeTo: url)?.absoluteURL
        else { return nil }
        guard AllowedSchemes.allow(target) else { throw AllowedSchemes.refusedRedirect(from: url, to: target) }
        guard target.host != nil else { return nil }
        var next = request
        next.url = target
        let method = request.httpMethod ?? "GET"
        let becomesGET = (response.statusCode == 303 && method != "HEAD")
            || ((response.statusCode == 301 || response.statusCode == 302) && method == "POST")
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        } else if request.httpBodyStream != nil {
            return nil
        }
        CrossOriginCredentials.drop(from: &next, goingFrom: url, credentials: credentials)
        return Hop(request: next, url: target, resendsBody: !becomesGET)
    }
}
#endif
