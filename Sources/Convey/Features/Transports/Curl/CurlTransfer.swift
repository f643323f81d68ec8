#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One request and response on the wire (one hop of a redirect chain, which the pipeline
/// follows), as its sender and the event loop hand it to each other.
///
/// Its state falls in three parts, each with its own guard:
/// - what the sender set up, fixed from then on: the handle configured for the request, the
///   sink, the limits;
/// - what the loop's thread alone touches while it runs: the handle's `CurlTransferState`,
///   behind a `CurlLoopBound` that asserts the thread, and `cancelRequested`;
/// - the hand-off: the continuation the sender waits on and the `CurlTransferEnding` the loop
///   leaves for it, behind `handOff`; which loop runs it, behind the pool's admission lock.
///
/// The sender prepares the transfer, the pool starts it on a loop, the loop runs it and resumes
/// the continuation when it ends, however it ends; from then on only the sender touches it and
/// its handle again.
final class CurlTransfer: Sendable {
    let easy: CurlEasyHandle
    /// The transport's handles and connection limit this transfer belongs to.
    let pool: CurlHandlePool
    let url: URL
    /// Scheme, host and port: transfers to one origin share its connections and its queue.
    let origin: String
    /// Whether the exchange goes over TLS (an `https` URL).
    let usesTLS: Bool
    /// The idle timeout, in nanoseconds of the monotonic clock.
    let idleTimeout: UInt64
    let maximumHeadSize: Int
    let sink: any ResponseBodySink
    let progressHandler: (@Sendable (TransferProgress) -> Void)?
    let requestBody: CurlRequestBody?
    /// The request's method, and whether it may go out a second time on a fresh connection when
    /// a reused one died before any response byte (RFC 9110 §9.2.2: idempotent methods only).
    let method: String
    let mayBeResent: Bool
    /// Whether gzip and deflate bodies are decoded here (not when the request asked for `identity`).
    let decodesContent: Bool
    /// Whether the loop keeps the head's lines and the body for the sender, which parses and
    /// delivers them once the transfer is back, rather than feeding the sink as bytes arrive:
    /// for a sink that takes bytes at the transport's pace, with no progress to report and no
    /// large body expected. The loop then does no more per response than copy bytes.
    let defersDelivery: Bool
    /// Who hears of the connection this transfer opens; `nil` when nobody listens.
    let connectionObserver: (any ConnectionObserver)?

    private struct HandOff {
        /// Resumed once, by whoever ends the transfer.
        var continuation: CheckedContinuation<Void, Never>?
        var ending: CurlTransferEnding?
    }

    /// Held by the party that writes it; ThreadSanitizer, which does not see this lock, sees the
    /// order through the loop's inbox lock on the way in and the checked continuation on the way out.
    private let handOff = Mutex(HandOff())

    /// The loop its pool admitted it to; `nil` while it waits.
    nonisolated(unsafe) var loop: CurlEventLoop?  // guarded by: the pool's admission lock
    /// Set when the sender was cancelled before the pool saw the transfer.
    nonisolated(unsafe) var cancelledBeforeAdmission = false  // guarded by: the pool's admission lock
    nonisolated(unsafe) private var cancelledBeforeStart = false  // guarded by: the event loop's thread, asserted

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
        idleTimeout = transportRequest.timeout.clampedTimeout.curlNanoseconds
        maximumHeadSize = transportRequest.maximumResponseHeadSize
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
        connectionObserver = transportRequest.connectionObserver
        defersDelivery = !sink.needsBackPressure && transportRequest.progress == nil && !transportRequest.expectsLargeBody
        decodesContent = easy.configure(for: request, address: address, bodySize: requestBody?.size,
                                        connectTimeout: connectTimeout, expectsLargeBody: transportRequest.expectsLargeBody)
        // The handle holds it, as it holds the response's buffers: the loop writes it, the sender reads it after the hand-off.
        easy.sentHead = transportRequest.capturesSentHead ? CurlSentHead() : nil
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

    // MARK: The hand-off

    /// Waits until the transfer has ended, however it ends, after `start` hands it over.
    nonisolated(nonsending) func run(start: () -> Void) async {
        await withCheckedContinuation { continuation in
            handOff.withLock { $0.continuation = continuation }
            start()
        }
    }

    /// Hands the transfer back to its sender at once, with the failure of a transfer that never
    /// went on the wire (the pool ends those, on a sender's thread).
    func end(_ ending: CurlTransferEnding) {
        leave(ending)?.resume()
    }

    /// Leaves `ending` for the sender and returns the continuation to resume it with: the loop
    /// resumes it once it holds no reference to this transfer any more.
    func leave(_ ending: CurlTransferEnding) -> CheckedContinuation<Void, Never>? {
        handOff.withLock { handOff in
            handOff.ending = ending
            defer { handOff.continuation = nil }
            return handOff.continuation
        }
    }

    /// Whether a cancellation reached the loop before the start did; the loop's thread only.
    var cancelRequested: Bool {
        get {
            CurlEventLoop.assertOnAnEventLoop()
            return cancelledBeforeStart
        }
        set {
            CurlEventLoop.assertOnAnEventLoop()
            cancelledBeforeStart = newValue
        }
    }

    /// The error of a transfer ended by cancellation.
    static func cancelled(_ url: URL) -> URLError {
        URLError(.cancelled, userInfo: [NSURLErrorFailingURLErrorKey: url])
    }

    // MARK: After the hand-off, on the sender's side

    /// What the transfer cost, once the response went to the sink whole, or the error it failed
    /// with. Delivers the head and body the loop kept, when delivery was deferred, on the
    /// caller's executor.
    nonisolated(nonsending) func outcome() async throws -> ExchangeMetrics {
        let ending = handOff.withLock { $0.ending } ?? CurlTransferEnding(failure: Self.cancelled(url))
        defer { requestBody?.close() }
        if let failure = ending.failure { throw ending.failedInCallback ? self.failure(for: failure) : failure }
        guard ending.result == CURLE_OK else {
            // A re-send stopped before it went out, or one curl gave up on because the body could not be rewound.
            if ending.resendRefused || (ending.result == CURLE_SEND_FAIL_REWIND && !mayBeResent) {
                throw CurlErrors.notResent(method: method, url: url)
            }
            if ending.result == CURLE_OUT_OF_MEMORY, !ending.headEnded {
                // curl refuses a single header line over its own limit (CURL_MAX_HTTP_HEADER) this way.
                throw ConveyError.responseTooLarge(limit: Self.curlHeaderLineLimit, url: url, isHead: true)
            }
            throw CurlErrors.urlError(for: ending.result, osErrno: easy.info(CURLINFO_OS_ERRNO), message: easy.errorMessage,
                                      url: url, bodyReadFailed: ending.bodyReadFailed)
        }
        guard ending.headEnded else {
            throw Self.malformed("the response head never completed before the connection closed", url: url)
        }
        let head: ResponseHead
        if let delivered = ending.deliveredHead {
            head = delivered
        } else {
            do {
                let coding: ContentDecoder.Coding?
                (head, coding) = try easy.headBuffer.withUnsafeBytes { block in
                    try CurlResponseHead.parse(block: block, maximumSize: maximumHeadSize, buffer: &easy.parseBuffer, url: url)
                }
                try await deliver(head, decoder: decodesContent ? coding.map { ContentDecoder(coding: $0) } : nil)
            } catch {
                throw failure(for: error)
            }
        }
        return metrics(httpVersion: head.httpVersion, tlsVersion: ending.tlsVersion)
    }

    /// Hands the sink the head and the body the loop kept, decoded when it has a coding Convey
    /// decodes, waiting whenever the sink is full.
    private nonisolated(nonsending) func deliver(_ head: ResponseHead, decoder: ContentDecoder?) async throws {
        try sink.receive(head)
        var offset = 0
        while true {
            let step = try easy.bodyBuffer.withUnsafeBytes { kept -> ContentDecoder.Progress in
                let rest = UnsafeRawBufferPointer(rebasing: kept[offset...])
                if let decoder { return try decoder.decode(rest) { try sink.offer($0) } }
                if rest.isEmpty { return ContentDecoder.Progress(consumed: 0, paused: false) }
                return try sink.offer(rest) ? ContentDecoder.Progress(consumed: rest.count, paused: false)
                    : ContentDecoder.Progress(consumed: 0, paused: true)
            }
            offset += step.consumed
            guard step.paused else { break }
            await withCheckedContinuation { continuation in sink.whenReady { continuation.resume() } }
            if Task.isCancelled { throw Self.cancelled(url) }
        }
        try decoder?.finish()
    }

    /// The figures curl kept for this transfer.
    private func metrics(httpVersion: String, tlsVersion: String?) -> ExchangeMetrics {
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
        metrics.sentHead = easy.sentHead?.text
        return metrics
    }

    /// What a callback's or the delivery's error means to the pipeline.
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
}

extension CurlTransfer: ExchangeCancelling {
    /// The run stopped: the transfer ends at once, wherever it is.
    func cancelExchange() { pool.cancel(self) }
}
#endif
