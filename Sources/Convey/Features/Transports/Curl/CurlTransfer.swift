#if canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request and response on the wire (one hop of a redirect chain, which the pipeline
/// follows): the easy handle set up for it, the sink its response goes to, and how it ended.
///
/// Ownership moves in one direction and back: the sender prepares it, the event loop runs it
/// (callbacks parse the head and feed the sink on the loop thread), and the loop hands it back by
/// resuming `continuation`, after which only the sender touches it again.
final class CurlTransfer: @unchecked Sendable {
    let easy: CurlEasyHandle
    /// The transport's handles and connection limit this transfer belongs to.
    let pool: CurlHandlePool
    let url: URL
    /// Scheme, host and port: transfers to one origin share its connections and its queue.
    let origin: String
    /// Whether the exchange goes over TLS (an `https` URL).
    private let usesTLS: Bool
    /// The idle timeout, in nanoseconds of the monotonic clock.
    let idleTimeout: UInt64
    private let requestBody: CurlRequestBody?
    private let progressHandler: (@Sendable (TransferProgress) -> Void)?
    /// The request's method, and whether it may go out a second time on a fresh connection when
    /// a reused one died before any response byte (RFC 9110 §9.2.2: idempotent methods only).
    private let method: String
    private let mayBeResent: Bool
    private let sink: any ResponseBodySink
    /// Whether gzip and deflate bodies are decoded here (not when the request asked for `identity`).
    private var decodesContent = true
    /// The request head as curl writes it, for a request that asks for it.
    private let sentHead: CurlSentHead?

    // Filled on the loop thread while the transfer runs.
    /// When bytes last moved, on the monotonic clock; the loop's idle timer reads it.
    var lastActivity: UInt64 = 0
    /// Whether the sink is full and curl has paused the transfer; the idle timer leaves it alone.
    var isPaused = false
    private var head: CurlResponseHead
    private var deliveredHead: ResponseHead?
    /// The connection's TLS version, read when the head arrived.
    private var tlsVersion: String?
    private var decoder: ContentDecoder?
    /// Bytes at the start of the next delivery that were consumed before a pause: curl delivers a
    /// paused chunk again, whole.
    private var consumedBeforePause = 0
    private var progress = TransferProgress()
    /// Why a callback stopped the transfer: the sink, the decoder or the head parser threw.
    private var callbackFailure: (any Error)?
    /// Set by the loop when it ends the transfer itself: cancellation or the idle timer.
    var failure: URLError?
    /// curl's verdict on the transfer, set by the loop when it ends.
    var result = CURLE_OK
    /// Set on the loop thread when a cancellation arrives there before the start.
    var cancelRequested = false
    /// The loop its pool admitted it to; `nil` while it waits. Behind the pool's admission lock.
    var loop: CurlEventLoop?
    /// Set when the sender was cancelled before the pool saw the transfer. Behind the pool's admission lock.
    var cancelledBeforeAdmission = false
    /// Orders a finished transfer's results before its sender reads them (see `outcome`).
    let handOffLock = InlineLock()
    /// How many times curl was about to send the request; above one, curl is re-sending it.
    private var sendAttempts = 0
    /// Set when a re-send of a request that must not be repeated was stopped.
    private var resendRefused = false
    /// Resumed by the loop, exactly once, when the transfer is over.
    var continuation: CheckedContinuation<Void, Never>?

    /// Prepares `easy` for `transportRequest`. Throws a `URLError` when the body file cannot be opened.
    init(_ transportRequest: TransportRequest, connectTimeout: Duration,
         sink: any ResponseBodySink, easy: CurlEasyHandle, pool: CurlHandlePool) throws {
        let request = transportRequest.request
        self.easy = easy
        self.pool = pool
        url = request.url
        self.sink = sink
        let address = request.url.absoluteString
        origin = easy.origin(of: address)
        usesTLS = origin.hasPrefix("https:")
        let idleTimeout = transportRequest.timeout.clampedTimeout
        self.idleTimeout = idleTimeout.curlNanoseconds
        head = CurlResponseHead(maximumSize: transportRequest.maximumResponseHeadSize, buffer: easy.takeHeadBuffer())
        progressHandler = transportRequest.progress
        method = request.method.rawValue
        mayBeResent = request.method.isIdempotent
        if let bodyFile = transportRequest.bodyFile {
            requestBody = try CurlRequestBody(file: bodyFile)
        } else if let data = request.body {
            requestBody = CurlRequestBody(data: data)
        } else {
            requestBody = nil
        }
        sentHead = transportRequest.capturesSentHead ? CurlSentHead() : nil
        configure(request, address: address, connectTimeout: connectTimeout)
        easy.readsInLargePieces = transportRequest.expectsLargeBody
        easy.sentHead = sentHead
    }

    /// `scheme://authority` of an absolute URL's text: everything before the path.
    static func origin(of address: String) -> String {
        let bytes = address.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return address }
        var end = bytes.index(colon, offsetBy: 3, limitedBy: bytes.endIndex) ?? bytes.endIndex
        while end < bytes.endIndex, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
            end = bytes.index(after: end)
        }
        let origin = address[..<end]
        // Most URLs are lowercase already: no second string for them.
        return origin.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? origin.lowercased() : String(origin)
    }

    /// Sets every option a request may change, each time: the handle keeps the last request's
    /// options otherwise (see `CurlEasyHandle` for why it is not reset).
    private func configure(_ request: OutgoingRequest, address: String, connectTimeout: Duration) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        easy.set(CURLOPT_URL, string: address)
        easy.set(CURLOPT_WRITEDATA, pointer: context)
        easy.set(CURLOPT_HEADERDATA, pointer: context)
        easy.set(CURLOPT_READDATA, pointer: context)
        easy.set(CURLOPT_PREREQDATA, pointer: context)
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.curlMilliseconds)

        let method = request.method.rawValue
        // Convey decodes gzip and deflate itself, checking their integrity, and hands any other
        // coding through undecoded; so curl neither asks for nor decodes anything.
        easy.set(CURLOPT_ACCEPT_ENCODING, pointer: nil)
        easy.set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        var extras = CurlHeaderList.Extras()
        if let acceptEncoding = request.fields.first(named: "Accept-Encoding") {
            decodesContent = !acceptEncoding.equalsIgnoringASCIICase("identity")
        } else {
            decodesContent = true
            extras.insert(.acceptEncoding)
        }
        // Back to a plain GET first (this also clears NOBODY and UPLOAD), then the method.
        easy.set(CURLOPT_HTTPGET, 1)
        let sendsBody = method != "HEAD" && (requestBody != nil || method == "POST" || method == "PUT" || method == "PATCH")
        if method == "HEAD" {
            easy.set(CURLOPT_NOBODY, 1)
        } else if sendsBody {
            easy.set(CURLOPT_POST, 1)
            easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: requestBody?.size ?? 0)
            // curl labels every body form-encoded; URLSession only POST bodies.
            if method != "POST", !request.fields.contains(named: "Content-Type") { extras.insert(.blankContentType) }
            // No `Expect: 100-continue` round trip, as with URLSession.
            extras.insert(.blankExpect)
        }
        let methodCurlSends = method == "HEAD" ? "HEAD" : sendsBody ? "POST" : "GET"
        if method == methodCurlSends {
            easy.set(CURLOPT_CUSTOMREQUEST, pointer: nil)
        } else {
            easy.set(CURLOPT_CUSTOMREQUEST, string: method)
        }
        // The fields go out in the request's order, repeats as separate lines; the handle keeps
        // the list it sent last and sends it again when nothing changed.
        easy.set(CURLOPT_HTTPHEADER, list: easy.headerList.list(for: request.fields, extras: extras))
    }

    /// Returns the handle's resources once the loop has handed the transfer back.
    func releaseResources() {
        requestBody?.close()
        easy.headBuffer = head.takeBuffer()
    }

    /// Hands the transfer back to its sender, with `failure` when the loop or the pool ended it.
    func end(failure: URLError?) {
        let continuation = handOffLock.withLock {
            self.failure = failure
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume()
    }

    /// The error of a transfer ended by cancellation.
    static func cancelled(_ url: URL) -> URLError {
        URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: url])
    }

    /// What the transfer cost, once the response went to the sink whole, or the error it failed
    /// with. Taking `handOffLock`, which whoever ended the transfer held, orders everything written before.
    func outcome() throws -> ExchangeMetrics {
        handOffLock.withLock {}
        if let callbackFailure { throw failure(for: callbackFailure) }
        if let failure { throw failure }
        guard result == CURLE_OK else {
            // A re-send stopped before it went out, or one curl gave up on because the body could not be rewound.
            if resendRefused || (result == CURLE_SEND_FAIL_REWIND && !mayBeResent) { throw CurlErrors.notResent(method: method, url: url) }
            if result == CURLE_OUT_OF_MEMORY, deliveredHead == nil {
                // curl refuses a single header line over its own limit (CURL_MAX_HTTP_HEADER) this way.
                throw ConveyError.responseTooLarge(limit: Self.curlHeaderLineLimit, url: url, isHead: true)
            }
            throw CurlErrors.urlError(for: result, osErrno: easy.info(CURLINFO_OS_ERRNO), message: easy.errorMessage,
                                      url: url, bodyReadFailed: requestBody?.readFailed ?? false)
        }
        guard let deliveredHead else {
            throw Self.malformed("the response head never completed before the connection closed", url: url)
        }
        do {
            try decoder?.finish()
        } catch {
            throw failure(for: error)
        }
        return metrics(httpVersion: deliveredHead.httpVersion)
    }

    /// The figures curl kept for this transfer.
    private func metrics(httpVersion: String) -> ExchangeMetrics {
        func elapsed(_ info: CURLINFO) -> Duration? {
            let microseconds = easy.offsetInfo(info)
            return microseconds > 0 ? .microseconds(microseconds) : nil
        }
        func size(_ info: CURLINFO) -> Int64? {
            let bytes = easy.offsetInfo(info)
            return bytes >= 0 ? bytes : nil
        }
        var metrics = ExchangeMetrics(
            nameLookup: elapsed(CURLINFO_NAMELOOKUP_TIME_T), connect: elapsed(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: elapsed(CURLINFO_APPCONNECT_TIME_T), firstByte: elapsed(CURLINFO_STARTTRANSFER_TIME_T),
            total: elapsed(CURLINFO_TOTAL_TIME_T), bytesSent: size(CURLINFO_SIZE_UPLOAD_T),
            bytesReceived: size(CURLINFO_SIZE_DOWNLOAD_T), httpVersion: httpVersion,
            reusedConnection: easy.info(CURLINFO_NUM_CONNECTS) == 0, tlsVersion: tlsVersion,
            certificateVerified: usesTLS ? pool.connectionOptions.verifiesCertificates : nil)
        metrics.sentHead = sentHead?.text
        return metrics
    }

    /// What a callback's error means to the pipeline.
    private func failure(for error: any Error) -> any Error {
        switch error {
        case CurlResponseHead.Failure.tooLarge(let limit):
            ConveyError.responseTooLarge(limit: Int64(limit), url: url, isHead: true)
        case CurlResponseHead.Failure.malformed(let reason):
            Self.malformed(reason, url: url)
        case let decoding as URLError where decoding.code == .cannotDecodeContentData:
            URLError(.cannotDecodeContentData, userInfo: [
                NSLocalizedDescriptionKey: "The body from \(url.absoluteString) could not be decoded: \(decoding.localizedDescription)",
                NSURLErrorFailingURLErrorKey: url,
            ])
        default: error
        }
    }

    private static func malformed(_ reason: String, url: URL) -> URLError {
        URLError(.badServerResponse, userInfo: [
            NSLocalizedDescriptionKey: "Malformed response from \(url.absoluteString): \(reason)",
            NSURLErrorFailingURLErrorKey: url,
        ])
    }

    /// curl's limit on one header line (CURL_MAX_HTTP_HEADER).
    private static var curlHeaderLineLimit: Int64 { 100 * 1024 }

    // MARK: Callbacks, on the loop thread

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        // Trailer fields after a chunked body: not part of the head.
        guard deliveredHead == nil else { return bytes.count }
        do {
            guard try head.consume(bytes) else { return bytes.count }
            let status = head.statusCode
            // An interim response (100 Continue, 103 Early Hints): the final head follows.
            if (100..<200).contains(status), status != 101 { return bytes.count }
            let final = try head.head(url: url)
            if decodesContent, let coding = ContentDecoder.Coding(contentEncoding: final.value(forHTTPHeaderField: "Content-Encoding")) {
                decoder = ContentDecoder(coding: coding)
            }
            try sink.receive(final)
            deliveredHead = final
            if usesTLS { tlsVersion = easy.tlsVersion }
            if progressHandler != nil {
                let expected = easy.offsetInfo(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
                progress.totalBytesToReceive = expected >= 0 ? expected : nil
            }
            return bytes.count
        } catch {
            callbackFailure = error
            return 0
        }
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        guard deliveredHead != nil else {
            callbackFailure = CurlResponseHead.Failure.malformed("body bytes arrived before a complete head")
            return 0
        }
        let skipped = min(consumedBeforePause, bytes.count)
        let input = UnsafeRawBufferPointer(rebasing: bytes[skipped...])
        do {
            if let decoder {
                let step = try decoder.decode(input) { try sink.offer($0) }
                if step.paused {
                    consumedBeforePause = skipped + step.consumed
                    reportReceived(step.consumed)
                    return pause()
                }
            } else if try !sink.offer(input) {
                return pause()
            }
            consumedBeforePause = 0
            reportReceived(input.count)
            return bytes.count
        } catch {
            callbackFailure = error
            return 0
        }
    }

    /// Pauses the transfer until the sink can take bytes again.
    private func pause() -> Int {
        isPaused = true
        // The loop running this transfer, read here on its own thread.
        let running = loop
        sink.whenReady { [self] in running?.resume(self) }
        return Int(CURL_WRITEFUNC_PAUSE)
    }

    private func reportReceived(_ count: Int) {
        guard let progressHandler, count > 0 else { return }
        progress.bytesReceived += Int64(count)
        progressHandler(progress)
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
extension CurlTransfer: ExchangeCancelling {
    /// The run stopped: the transfer ends at once, wherever it is.
    func cancelExchange() { pool.cancel(self) }
}
#endif
