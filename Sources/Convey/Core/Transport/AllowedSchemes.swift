import Foundation

/// The schemes Convey sends to and follows redirects to: http and https, nothing else, on every
/// transport (libcurl and URLSession would otherwise fetch `file://`, `ftp://` or `gopher://`).
enum AllowedSchemes {
    /// Whether `url` has an http or https scheme.
    static func allow(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// The error for a request to a URL with another scheme; nothing was sent.
    static func unsupported(_ url: URL) -> URLError {
        URLError(.unsupportedURL, userInfo: [
            NSLocalizedDescriptionKey: "only http and https URLs are sent, not \(url.scheme ?? "a URL without a scheme")",
            NSURLErrorFailingURLErrorKey: url,
        ])
    }

    /// The error for a redirect from `url` to `target` with another scheme; the target was not fetched.
    static func refusedRedirect(from url: URL, to target: URL) -> ConveyError {
        .transport(.redirectRefused, url: url, code: URLError.unsupportedURL.rawValue,
                   reason: "redirect to \(target.absoluteString) refused: only http and https are followed")
    }
}
