#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Foundation

/// What the event loop's thread alone touches while a transfer runs on a handle: where the head
/// and body stand, the idle clock, pauses and re-sends. One per easy handle, reused by each of
/// its transfers, and reached by curl's callbacks through the handle's context pointer, a
/// `CurlLoopBound` that asserts the thread.
///
/// The head's lines are copied as curl delivers them into the handle's head buffer; the loop
/// reads only what it must to know where the final head ends (each block's status code and
/// blank line). When the transfer defers delivery (`CurlTransfer.defersDelivery`), the body too
/// is kept in the handle's body buffer and the sender parses and delivers both once the transfer
/// is back, on its own thread; a body that outgrows `deferredBodyLimit` is handed to the sink
/// from then on, here, as it is for a transfer that does not defer (streams, downloads,
/// progress): then the head is parsed here when it ends, and the body fed to the sink as it
/// arrives, through the decoder when it has a coding Convey decodes.
///
/// What the sender needs afterwards leaves in a `CurlTransferEnding`, through the transfer's
/// hand-off lock.
final class CurlTransferState {
    /// The transfer running now: set by `begin`, cleared by `finish`.
    private var transfer: CurlTransfer?
    /// The loop running it.
    private unowned(unsafe) var loop: CurlEventLoop?

    /// When bytes last moved, on the monotonic clock; the loop's idle timer reads it.
    var lastActivity: UInt64 = 0
    /// Whether the sink is full and curl has paused the transfer; the idle timer leaves it alone.
    var isPaused = false

    /// The status code of the block being received, and whether one has started and not ended.
    private var blockStatus = 0
    private var inBlock = false
    /// Whether the final head has ended: later lines are trailers, and the body may come.
    private var headEnded = false
    /// Whether the body is being kept in the handle's body buffer for the sender.
    private var defers = false
    /// How much of the body buffer, kept before the transfer switched to feeding the sink, the
    /// sink has taken: those bytes go to it before any new ones.
    private var heldBackOffset = 0
    /// The head handed to the sink here, when delivery is not deferred.
    private var deliveredHead: ResponseHead?
    private var decoder: ContentDecoder?
    /// Bytes at the start of the next delivery that were consumed before a pause: curl delivers a
    /// paused chunk again, whole.
    private var consumedBeforePause = 0
    private var progress = TransferProgress()
    /// Why a callback stopped the transfer: the sink, the decoder or the head threw.
    private var failure: (any Error)?
    /// How much of the request body curl has read.
    private var bodyOffset = 0
    private var bodyReadFailed = false
    /// How many times curl was about to send the request; above one, curl is re-sending it.
    private var sendAttempts = 0
    /// Set when a re-send of a request that must not be repeated was stopped.
    private var resendRefused = false
    /// The connection's TLS version, read when the head ended.
    private var tlsVersion: String?
    /// Whether the transfer uses a connection its transport's `CurlConnectionTracker` tracks, and
    /// whether that connection is reported once this transfer's head arrives.
    private var usesTrackedConnection = false
    private var connectionAwaitsHead = false

    /// The most body bytes kept for the sender before the sink gets them here instead.
    static var deferredBodyLimit: Int { 64 * 1024 }

    /// Starts `transfer` on `loop`, from a clean state.
    func begin(_ transfer: CurlTransfer, on loop: CurlEventLoop, now: UInt64) {
        self.transfer = transfer
        self.loop = loop
        lastActivity = now
        isPaused = false
        blockStatus = 0
        inBlock = false
        headEnded = false
        defers = transfer.defersDelivery
        heldBackOffset = 0
        consumedBeforePause = 0
        progress = TransferProgress()
        bodyOffset = 0
        bodyReadFailed = false
        sendAttempts = 0
        resendRefused = false
        tlsVersion = nil
        usesTrackedConnection = false
        connectionAwaitsHead = false
    }

    /// Ends the running transfer: what the sender needs, with `loopFailure` when the loop ended
    /// it (cancellation, the idle timer); a callback's own failure comes first.
    func finish(result: CURLcode, loopFailure: URLError? = nil) -> CurlTransferEnding {
        var ending = CurlTransferEnding(result: result, failure: failure ?? loopFailure, failedInCallback: failure != nil,
                                        resendRefused: resendRefused, bodyReadFailed: bodyReadFailed, headEnded: headEnded,
                                        deliveredHead: deliveredHead, tlsVersion: tlsVersion)
        if ending.failure == nil, result == CURLE_OK, let decoder {
            do {
                try decoder.finish()
            } catch {
                ending.failure = error
                ending.failedInCallback = true
            }
        }
        if usesTrackedConnection, let transfer { transfer.pool.connections?.transferEnded(ObjectIdentifier(transfer.easy)) }
        transfer = nil
        loop = nil
        deliveredHead = nil
        decoder = nil
        failure = nil
        return ending
    }

    // MARK: Callbacks

    fileprivate func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        guard let transfer else { return 0 }
        // Trailer fields after a chunked body: not part of the head.
        guard !headEnded else { return line.count }
        if CurlResponseHead.isStatusLine(line) {
            transfer.easy.headBuffer.removeAll(keepingCapacity: true)
            blockStatus = CurlResponseHead.statusCode(ofStatusLine: line)
            inBlock = true
        } else if !inBlock {
            failure = CurlResponseHead.Failure.malformed("a header line came before any status line")
            return 0
        }
        guard transfer.easy.headBuffer.count + line.count <= transfer.maximumHeadSize else {
            failure = CurlResponseHead.Failure.tooLarge(limit: transfer.maximumHeadSize)
            return 0
        }
        transfer.easy.headBuffer.append(contentsOf: line.assumingMemoryBound(to: UInt8.self))
        guard CurlResponseHead.isBlankLine(line) else { return line.count }
        inBlock = false
        // An interim response (100 Continue, 103 Early Hints): the final head follows.
        if (100..<200).contains(blockStatus), blockStatus != 101 { return line.count }
        headEnded = true
        if transfer.usesTLS { tlsVersion = transfer.easy.tlsVersion }
        if connectionAwaitsHead {
            connectionAwaitsHead = false
            transfer.pool.connections?.headReceived(ObjectIdentifier(transfer.easy), version: transfer.easy.info(CURLINFO_HTTP_VERSION))
        }
        guard !defers else { return line.count }
        do {
            try deliverHead(of: transfer)
        } catch {
            failure = error
            return 0
        }
        return line.count
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        guard let transfer else { return 0 }
        guard headEnded else {
            failure = CurlResponseHead.Failure.malformed("body bytes arrived before a complete head")
            return 0
        }
        do {
            if defers {
                if transfer.easy.bodyBuffer.count + bytes.count <= Self.deferredBodyLimit {
                    transfer.easy.bodyBuffer.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self))
                    return bytes.count
                }
                // Too large to keep: the sink gets the head now, then what was kept, then the rest.
                defers = false
                heldBackOffset = 0
                try deliverHead(of: transfer)
            }
            if heldBackOffset < transfer.easy.bodyBuffer.count {
                let step = try transfer.easy.bodyBuffer.withUnsafeBytes { kept in
                    try offer(UnsafeRawBufferPointer(rebasing: kept[heldBackOffset...]), from: transfer)
                }
                heldBackOffset += step.consumed
                if step.paused { return pause(transfer) }
                transfer.easy.bodyBuffer.removeAll(keepingCapacity: true)
                heldBackOffset = 0
            }
            let skipped = min(consumedBeforePause, bytes.count)
            let step = try offer(UnsafeRawBufferPointer(rebasing: bytes[skipped...]), from: transfer)
            if step.paused {
                consumedBeforePause = skipped + step.consumed
                return pause(transfer)
            }
            consumedBeforePause = 0
            return bytes.count
        } catch {
            failure = error
            return 0
        }
    }

    /// The transfer's connection is set up, new or reused, and its request about to go out on it
    /// (`CURLOPT_PREREQFUNCTION`): its transport's tracker hears of it when the request has a
    /// connection observer or the transport tracks a connection it might be reusing.
    fileprivate func connected(remoteAddress: UnsafePointer<CChar>?, remotePort: Int32, localPort: Int32) {
        guard let transfer, let tracker = transfer.pool.connections, transfer.connectionObserver != nil || tracker.isTracking else { return }
        let isNew = transfer.easy.info(CURLINFO_NUM_CONNECTS) > 0
        // Where the connection goes is worked out only for a new one, not for each request.
        let use = tracker.transferConnected(ObjectIdentifier(transfer.easy), isNew: isNew,
                                            endpoints: CurlConnectionTracker.Endpoints(remoteAddress: remoteAddress, remotePort: remotePort,
                                                                                       localPort: localPort),
                                            observer: transfer.connectionObserver,
                                            connection: isNew && transfer.connectionObserver != nil ? TransportConnection(url: transfer.url) : nil)
        usesTrackedConnection = usesTrackedConnection || use.tracked
        connectionAwaitsHead = use.unreported
    }

    /// Whether the request may go out now: always the first time; again (curl retrying on a
    /// fresh connection after a reused one died) only when its method is idempotent.
    fileprivate func mayGoOut() -> Bool {
        guard let transfer else { return false }
        sendAttempts += 1
        guard sendAttempts > 1, !transfer.mayBeResent else { return true }
        resendRefused = true
        return false
    }

    fileprivate func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lastActivity = CurlClock.now
        guard let transfer, let requestBody = transfer.requestBody else { return 0 }
        guard let count = requestBody.read(into: buffer, at: bodyOffset) else {
            bodyReadFailed = true
            return Int(CURL_READFUNC_ABORT)
        }
        bodyOffset += count
        if let progressHandler = transfer.progressHandler, count > 0 {
            progress.bytesSent += Int64(count)
            progress.totalBytesToSend = requestBody.size
            progressHandler(progress)
        }
        return count
    }

    // MARK: Feeding the sink, when delivery is not deferred

    /// Parses the head collected so far and hands it to the sink.
    private func deliverHead(of transfer: CurlTransfer) throws {
        let (head, coding) = try transfer.easy.headBuffer.withUnsafeBytes { block in
            try CurlResponseHead.parse(block: block, maximumSize: transfer.maximumHeadSize, buffer: &transfer.easy.parseBuffer, url: transfer.url)
        }
        if transfer.decodesContent, let coding { decoder = ContentDecoder(coding: coding) }
        try transfer.sink.receive(head)
        deliveredHead = head
        if transfer.progressHandler != nil {
            let expected = transfer.easy.offsetInfo(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
            progress.totalBytesToReceive = expected >= 0 ? expected : nil
        }
    }

    /// Offers `input` to the sink, decoded when it has a coding: how much of it was taken, and
    /// whether the sink refused the rest.
    private func offer(_ input: UnsafeRawBufferPointer, from transfer: CurlTransfer) throws -> (consumed: Int, paused: Bool) {
        if let decoder {
            let step = try decoder.decode(input) { try transfer.sink.offer($0) }
            reportReceived(step.consumed, of: transfer)
            return (step.consumed, step.paused)
        }
        guard try transfer.sink.offer(input) else { return (0, true) }
        reportReceived(input.count, of: transfer)
        return (input.count, false)
    }

    /// Pauses the transfer until the sink can take bytes again.
    private func pause(_ transfer: CurlTransfer) -> Int {
        isPaused = true
        if let loop { transfer.sink.whenReady { loop.resume(transfer) } }
        return Int(CURL_WRITEFUNC_PAUSE)
    }

    private func reportReceived(_ count: Int, of transfer: CurlTransfer) {
        guard let progressHandler = transfer.progressHandler, count > 0 else { return }
        progress.bytesReceived += Int64(count)
        progressHandler(progress)
    }
}

/// What the loop leaves for the sender when a transfer ends, through its hand-off lock.
struct CurlTransferEnding: Sendable {
    /// curl's verdict.
    var result: CURLcode
    /// Why the transfer stopped early: a callback's failure (`failedInCallback`), or the loop's
    /// own (cancellation, the idle timer, a transfer curl would not start).
    var failure: (any Error)?
    var failedInCallback = false
    /// A re-send of a request that must not be repeated was stopped.
    var resendRefused = false
    /// Reading the request body failed.
    var bodyReadFailed = false
    /// Whether the final head ended: in the handle's head buffer when delivery was deferred.
    var headEnded = false
    /// The head the sink got on the loop, when delivery was not deferred.
    var deliveredHead: ResponseHead?
    /// The connection's TLS version.
    var tlsVersion: String?

    /// The ending of a transfer that never went on the wire.
    init(failure: URLError) {
        result = CURLE_OK
        self.failure = failure
    }

    init(result: CURLcode, failure: (any Error)?, failedInCallback: Bool, resendRefused: Bool, bodyReadFailed: Bool,
         headEnded: Bool, deliveredHead: ResponseHead?, tlsVersion: String?) {
        self.result = result
        self.failure = failure
        self.failedInCallback = failedInCallback
        self.resendRefused = resendRefused
        self.bodyReadFailed = bodyReadFailed
        self.headEnded = headEnded
        self.deliveredHead = deliveredHead
        self.tlsVersion = tlsVersion
    }
}

// Plain C functions: they cannot throw, and nothing in them can unwind into curl. Their context
// is the handle's `CurlLoopBound<CurlTransferState>`, set once when the handle is made.

/// The state behind a callback's context pointer, asserting (in debug) that curl calls on a loop.
private func transferState(_ context: UnsafeMutableRawPointer) -> CurlTransferState {
    Unmanaged<CurlLoopBound<CurlTransferState>>.fromOpaque(context).takeUnretainedValue().value
}

let curlWriteCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    return transferState(context).receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let curlHeaderCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    return transferState(context).receiveHeader(UnsafeRawBufferPointer(start: buffer, count: size * count))
}

let curlPrerequestCallback: convey_curl_prereq_callback = { context, remoteAddress, _, remotePort, localPort in
    guard let context else { return CURL_PREREQFUNC_OK }
    let state = transferState(context)
    state.connected(remoteAddress: remoteAddress, remotePort: remotePort, localPort: localPort)
    return state.mayGoOut() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}

let curlReadCallback: convey_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
    return transferState(context).sendBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}
#endif
