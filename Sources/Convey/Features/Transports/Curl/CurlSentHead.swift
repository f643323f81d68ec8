#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl

/// The request head libcurl wrote for one transfer, byte for byte, for a request that asks for it
/// (`TransportRequest.capturesSentHead`): what curl's own `-v` prints after `> `, `Host` and
/// `Accept` included.
///
/// Collected from curl's debug callback (`CURLOPT_VERBOSE` with `CURLOPT_DEBUGFUNCTION`, the
/// `CURLINFO_HEADER_OUT` pieces), on the loop thread while the transfer runs; read by the sender
/// once the loop handed the transfer back. A handle turns the callback on only for such a
/// request (`CurlEasyHandle.sentHead`), so other requests pay nothing for it.
final class CurlSentHead {
    private var bytes: [UInt8] = []
    /// Whether `bytes` hold a whole head (up to its empty line).
    private var isComplete = false

    /// The head as written, `nil` when curl wrote none (the transfer failed before sending).
    var text: String? {
        bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// One piece of the head. A piece after a whole head starts the next one, which replaces it:
    /// a `CONNECT` to a proxy comes before the request, and curl may send a request again on a
    /// fresh connection; the last head is the one the response answers.
    fileprivate func append(_ piece: UnsafeRawBufferPointer) {
        if isComplete {
            bytes.removeAll(keepingCapacity: true)
            isComplete = false
        }
        bytes.append(contentsOf: piece)
        isComplete = bytes.count >= 4 && bytes.suffix(4).elementsEqual([13, 10, 13, 10])
    }

    /// Turns curl's debug output on for `easy`, into `head`, or off when `head` is `nil`.
    static func collect(into head: CurlSentHead?, on easy: CurlEasyHandle) {
        guard let head else {
            easy.set(CURLOPT_VERBOSE, 0)
            easy.set(CURLOPT_DEBUGDATA, pointer: nil)
            return
        }
        _ = convey_curl_easy_setopt_debug(easy.raw, curlDebugCallback)
        easy.set(CURLOPT_DEBUGDATA, pointer: Unmanaged.passUnretained(head).toOpaque())
        easy.set(CURLOPT_VERBOSE, 1)
    }
}

/// A plain C function: keeps the pieces of the head as sent, ignores everything else curl reports.
private let curlDebugCallback: convey_curl_debug_callback = { _, type, data, size, context in
    guard type == CURLINFO_HEADER_OUT, let data, let context else { return 0 }
    let head = Unmanaged<CurlSentHead>.fromOpaque(context).takeUnretainedValue()
    head.append(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#endif
