#if canImport(CConveyCurlShim)
import CConveyCurlShim
import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request and response on the wire (one hop of a redirect chain): the easy handle set up
/// for it, and what comes back.
///
/// Ownership moves in one direction and back: the sender prepares it, the event loop runs it
/// (callbacks fill `headerBytes` and `body` on the loop thread), and the loop hands it back by
/// resuming `continuation`, after which only the sender touches it again.
final class CurlTransfer: @unchecked Sendable {
    let easy: CurlEasyHandle
    let url: URL
    /// Scheme, host and port: transfers to one origin share its connections and its queue.
    let origin: String
    /// The idle timeout, in nanoseconds of the monotonic clock.
    let idleTimeout: UInt64
    private let requestBody: CurlRequestBody?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let progressHandler: (@Sendable (TransferProgress) -> Void)?
    /// The request's method, and whether it may go out a second time on a fresh connection when
    /// a reused one died before any response byte (RFC 9110 §9.2.2: idempotent methods only).
    private let method: String
    private let mayBeResent: Bool

    // Filled on the loop thread while the transfer runs.
    /// When bytes last moved, on the monotonic clock; the loop's idle timer reads it.
    var lastActivity: UInt64 = 0
    /// The header block of the latest response (an earlier `100 Continue` block is dropped).
    private var headerBytes: [UInt8] = []
    private var body = Data()
    private var progress = TransferProgress()
    /// `nil` until the first body bytes arrive; `false` for the body of a redirect.
    private var reportsDownloadProgress: Bool?
    /// Set by the loop when it ends the transfer itself: cancellation or the idle timer.
    var failure: URLError?
    /// curl's verdict on the transfer, set by the loop when it ends.
    var result = CURLE_OK
    /// Set on the loop thread when a cancellation arrives before the start.
    var cancelRequested = false
    /// How many times curl was about to send the request; above one, curl is re-sending it.
    private var sendAttempts = 0
    /// Set when a re-send of a request that must not be repeated was stopped.
    private var resendRefused = false
    /// Resumed by the loop, exactly once, when the transfer is over.
    var continuation: CheckedContinuation<Void, Never>?

    /// Prepares `easy` for `request`. Throws a `URLError` when the body file cannot be opened.
    init(request: URLRequest, url: URL, bodyFile: URL?, idleTimeout: Duration, connectTimeout: Duration,
         totalTimeLeft: Duration?, progress: (@Sendable (TransferProgress) -> Void)?, easy: CurlEasyHandle) throws {
        self.easy = easy
        self.url = url
        let address = url.absoluteString
        origin = CurlTransfer.origin(of: address)
        self.idleTimeout = idleTimeout.curlNanoseconds
        progressHandler = progress
        method = request.httpMethod ?? "GET"
        mayBeResent = HTTPMethod(rawValue: method).isIdempotent
        if let bodyFile {
            requestBody = try CurlRequestBody(file: bodyFile)
        } else if let data = request.httpBody {
            requestBody = CurlRequestBody(data: data)
        } else if let stream = request.httpBodyStream {
            requestBody = CurlRequestBody(stream: stream)
        } else {
            requestBody = nil
        }
        configure(request, address: address, connectTimeout: connectTimeout, totalTimeLeft: totalTimeLeft)
    }

    /// `scheme://authority` of an absolute URL's text: everything before the path.
    static func origin(of address: String) -> String {
        let bytes = address.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return address }
        var end = bytes.index(colon, offsetBy: 3, limitedBy: bytes.endIndex) ?? bytes.endIndex
        while end < bytes.endIndex, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end = bytes.index(after: end)
        }
        return String(address[..<end]).lowercased()
    }

    /// Sets every option a request may change, each time: the handle keeps the last request's
    /// options otherwise (see `CurlEasyHandle` for why it is not reset).
    private func configure(_ request: URLRequest, address: String, connectTimeout: Duration, totalTimeLeft: Duration?) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        easy.set(CURLOPT_URL, string: address)
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        easy.set(CURLOPT_READDATA, pointer: context)
        easy.set(CURLOPT_PREREQDATA, pointer: context)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.curlMilliseconds)
        easy.set(CURLOPT_TIMEOUT_MS, totalTimeLeft?.curlMilliseconds ?? 0)

        let method = request.httpMethod ?? "GET"
        var fields = request.allHTTPHeaderFields ?? [:]
        // Like URLSession: accept every encoding curl decodes unless the request names its own;
        // `identity` goes out as a plain header and nothing is decoded.
        let acceptEncoding = CurlHeaderName.remove("Accept-Encoding", from: &fields)
        if let acceptEncoding, acceptEncoding.lowercased() == "identity" {
            fields["Accept-Encoding"] = acceptEncoding
            easy.set(CURLOPT_ACCEPT_ENCODING, pointer: nil)
        } else {
            easy.set(CURLOPT_ACCEPT_ENCODING, string: acceptEncoding ?? "")
        }
        // curl computes the length itself.
        _ = CurlHeaderName.remove("Content-Length", from: &fields)

        var lines: [String] = []
        // Back to a plain GET first (this also clears NOBODY and UPLOAD), then the method.
        easy.set(CURLOPT_HTTPGET, 1)
        let sendsBody = method != "HEAD" && (requestBody != nil || ["POST", "PUT", "PATCH"].contains(method))
        if method == "HEAD" {
            easy.set(CURLOPT_NOBODY, 1)
        } else if sendsBody {
            easy.set(CURLOPT_POST, 1)
            // -1: a stream of unknown length, sent chunked.
            easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: requestBody.map { $0.size ?? -1 } ?? 0)
            // curl labels every body form-encoded; URLSession only POST bodies.
            if method != "POST", !fields.keys.contains(where: { CurlHeaderName.matches($0, "Content-Type") }) {
                lines.append("Content-Type:")
            }
            // No `Expect: 100-continue` round trip, as with URLSession.
            lines.append("Expect:")
        }
        let methodCurlSends = method == "HEAD" ? "HEAD" : sendsBody ? "POST" : "GET"
        if method == methodCurlSends {
            easy.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
        } else {
            easy.set(CURLOPT_CUSTOMREQUEST, string: method)
        }
        for (name, value) in fields {
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        for line in lines {
            headerList = line.withCString { curl_slist_append(headerList, $0) } ?? headerList
        }
        easy.set(CURLOPT_HTTPHEADER, list: headerList)
    }

    /// Returns the handle's resources once the loop has handed the transfer back.
    func releaseResources() {
        requestBody?.close()
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
    }

    /// The response, or the `URLError` the transfer ended with. `handOff` is the lock the loop
    /// held when it finished the transfer: taking it orders everything the loop wrote before.
    func outcome(after handOff: NSLock) throws -> (response: HTTPURLResponse, body: Data) {
        handOff.withLock {}
        if let failure { throw failure }
        guard result == CURLE_OK else {
            if resendRefused { throw CurlErrors.notResent(method: method, url: url) }
            throw CurlErrors.urlError(for: result, osErrno: easy.info(CURLINFO_OS_ERRNO), message: easy.errorMessage,
                                      url: url, bodyReadFailed: requestBody?.readFailed ?? false)
        }
        let status = easy.info(CURLINFO_RESPONSE_CODE)
        let version = CurlResponseHead.httpVersion(curlVersion: easy.info(CURLINFO_HTTP_VERSION))
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: version,
                                             headerFields: CurlResponseHead.fields(in: headerBytes)) else {
            throw URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
        }
        return (response, body)
    }

    // MARK: Callbacks, on the loop thread

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        // A header block arrives all at once; its status line is activity enough.
        if bytes.starts(with: CurlResponseHead.statusLinePrefix) {
            lastActivity = CurlClock.now
            headerBytes.removeAll(keepingCapacity: true)
        }
        headerBytes.append(contentsOf: bytes)
        return bytes.count
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        body.append(contentsOf: bytes)
        guard let progressHandler else { return bytes.count }
        if reportsDownloadProgress == nil {
            reportsDownloadProgress = !CurlRedirect.isRedirect(status: easy.info(CURLINFO_RESPONSE_CODE))
            let expected = easy.offsetInfo(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
            progress.totalBytesToReceive = expected >= 0 ? expected : nil
        }
        guard reportsDownloadProgress == true else { return bytes.count }
        progress.bytesReceived += Int64(bytes.count)
        progressHandler(progress)
        return bytes.count
    }

    /// Whether the request may go out now: always the first time; again (curl retrying on a
    /// fresh connection after a reused one died) only when its method is idempotent.
    fileprivate func mayGoOut() -> Bool {
        sendAttempts += 1
        guard sendAttempts > 1, !mayBeResent else { return true }
        resendRefused = true
        return false
    }

    fileprivate func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        guard let requestBody else { return 0 }
        guard let count = requestBody.read(into: buffer) else { return Int(CURL_READFUNC_ABORT) }
        if let progressHandler, count > 0 {
            progress.bytesSent += Int64(count)
            progress.totalBytesToSend = requestBody.size
            progressHandler(progress)
        }
        return count
    }
}

// Plain C functions: they cannot throw, and nothing in them can unwind into curl.

let curlWriteCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let curlHeaderCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let curlPrerequestCallback: convey_curl_prereq_callback = { context, _, _, _, _ in
    guard let context else { return CURL_PREREQFUNC_OK }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.mayGoOut() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}

let curlReadCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}
#endif
