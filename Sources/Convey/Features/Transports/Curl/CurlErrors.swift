#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Maps curl's result codes onto the `URLError`s URLSession throws for the same failures, so
/// the pipeline's error mapping treats both transports alike.
enum CurlErrors {
    static func urlError(for code: CURLcode, osErrno: Int, message: String, url: URL, bodyReadFailed: Bool) -> URLError {
        let reason = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
        var urlCode = self.code(for: code, osErrno: osErrno, bodyReadFailed: bodyReadFailed, message: message)
        var description = "\(reason) (curl error \(code.rawValue))"
        if let check = secureConnectionCheck(for: code) {
            // Which check failed, and for which host: "trust" alone does not say what to fix.
            description = "\(check) failed for \(url.host ?? "?"): \(description)"
            if code == CURLE_PEER_FAILED_VERIFICATION, message.contains("expired") { urlCode = .serverCertificateHasBadDate }
        }
        return URLError(urlCode, userInfo: [
            NSLocalizedDescriptionKey: description,
            NSURLErrorFailingURLErrorKey: url,
        ])
    }

    /// The TLS check a result code reports the failure of, or `nil` for another kind of failure.
    static func secureConnectionCheck(for code: CURLcode) -> String? {
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION: "Certificate verification"
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: "Public-key pinning"
        case CURLE_SSL_CACERT_BADFILE: "Loading the trusted certificates"
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CLIENTCERT: "Loading the client certificate"
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER: "The TLS handshake"
        case CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_INVALIDCERTSTATUS: "Certificate verification"
        default: nil
        }
    }

    /// The failure of every request of a transport whose connection options cannot be used.
    static func unusableConfiguration(_ reason: String, url: URL) -> URLError {
        URLError(.secureConnectionFailed, userInfo: [
            NSLocalizedDescriptionKey: "The transport's TLS or proxy settings cannot be used for \(url.host ?? "?"): \(reason)",
            NSURLErrorFailingURLErrorKey: url,
        ])
    }

    /// The failure of a request that is not safe to repeat, whose re-send curl was stopped from
    /// making (see `CurlTransfer.mayGoOut`).
    static func notResent(method: String, url: URL) -> ConveyError {
        .transport(.notResent, url: url, code: URLError.networkConnectionLost.rawValue,
                   reason: "the reused connection closed before any response; a \(method) is not sent a second time")
    }

    /// The URLError code URLSession uses for the same failure. `message` is curl's error buffer:
    /// an "unsupported protocol" or receive error whose message blames the server's answer (not
    /// HTTP, a bad status line, broken chunked framing) is a malformed response.
    static func code(for code: CURLcode, osErrno: Int, bodyReadFailed: Bool, message: String = "") -> URLError.Code {
        if code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_RECV_ERROR, let byMessage = LibcurlMessages.code(for: message) {
            return byMessage
        }
        return switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case CURLE_OUT_OF_MEMORY: .dataLengthExceedsMaximum
        case CURLE_URL_MALFORMAT: .badURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .cannotFindHost
        case CURLE_COULDNT_CONNECT: osErrno == Int(ETIMEDOUT) ? .timedOut : .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .networkConnectionLost
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP3: .badServerResponse
        case CURLE_BAD_CONTENT_ENCODING: .cannotDecodeContentData
        case CURLE_TOO_MANY_REDIRECTS: .httpTooManyRedirects
        case CURLE_FILESIZE_EXCEEDED: .dataLengthExceedsMaximum
        case CURLE_PEER_FAILED_VERIFICATION: .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            .secureConnectionFailed
        case CURLE_SSL_CERTPROBLEM, CURLE_SSL_CLIENTCERT: .clientCertificateRejected
        case CURLE_ABORTED_BY_CALLBACK, CURLE_READ_ERROR: bodyReadFailed ? .cannotOpenFile : .unknown
        default: .unknown
        }
    }
}
#endif
