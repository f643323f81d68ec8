import Foundation

/// Reads libcurl's error messages for what they say about the server's answer, where its result
/// code does not: URLSession on Linux runs on libcurl and reports most failures as
/// `URLError(.unknown)` with curl's message, and curl reports broken chunked framing as a
/// receive error. Both transports then give the same fault the same `URLError` code.
enum LibcurlMessages {
    /// The `URLError` code a libcurl message stands for, or `nil` when it is not one of these.
    static func code(for message: String) -> URLError.Code? {
        for (fragment, code) in table where message.contains(fragment) { return code }
        return nil
    }

    private static let table: [(String, URLError.Code)] = [
        ("transfer closed with", .networkConnectionLost),
        ("Connection reset by peer", .networkConnectionLost),
        ("chunked-encoding", .badServerResponse),
        ("HTTP/0.9", .badServerResponse),
        ("Unsupported response code", .badServerResponse),
        ("Weird server reply", .badServerResponse),
        ("Invalid status line", .badServerResponse),
        ("content unencoding", .cannotDecodeContentData),
        ("Unrecognized content encoding", .cannotDecodeContentData),
        ("Empty reply from server", .networkConnectionLost),
        ("Out of memory", .dataLengthExceedsMaximum),
        ("SSL certificate problem", .serverCertificateUntrusted),
        ("SSL connect error", .secureConnectionFailed),
    ]
}
