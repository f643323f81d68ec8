#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl

/// What every handle of one transport shares: set once when the handle is made.
struct CurlHandleDefaults: Sendable {
    /// The `CURLSH *` holding the transport's cookie jar and TLS sessions, if there is one.
    nonisolated(unsafe) var share: UnsafeMutableRawPointer?  // guarded by: its own locks (libcurl's share lock callbacks)
    /// Whether curl's cookie engine runs (only with a share: without one, each handle would keep its own jar).
    var storesCookies: Bool
    /// The transport's trust, pinning, TLS version, client certificate and proxy options.
    var connectionOptions: CurlConnectionOptions
    /// Who hears of the sockets the handle's connections open and close; `nil`: nobody.
    var connections: CurlConnectionTracker? = nil
}

/// One libcurl easy handle with its error buffer and its buffers, reused across transfers.
///
/// Owned by one party at a time: the idle pool, the sender preparing a request and reading its
/// response, or the event loop while the transfer runs. What only the loop touches is its
/// `transferState`, which asserts so.
///
/// Never `curl_easy_reset`: that turns the cookie engine off, and turning it back on for each
/// request leaks about 60 bytes a time in libcurl 7.88. Instead the options every transfer
/// needs are set here once, and `configure` sets every option a request may change.
final class CurlEasyHandle: @unchecked Sendable {  // guarded by: one owner at a time, handed over through the pool's lock, the loop's inbox and the transfer's hand-off
    /// The `CURL *`.
    let raw: UnsafeMutableRawPointer
    /// Where curl writes a readable message when a transfer fails (`CURLOPT_ERRORBUFFER`).
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Creates a handle, or returns `nil` when libcurl cannot allocate one.
    init?(defaults: CurlHandleDefaults) {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer[0] = 0
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        set(CURLOPT_WRITEFUNCTION, callback: curlWriteCallback)
        set(CURLOPT_HEADERFUNCTION, callback: curlHeaderCallback)
        set(CURLOPT_READFUNCTION, callback: curlReadCallback)
        _ = convey_curl_easy_setopt_prereq(raw, curlPrerequestCallback)
        // Every transfer on this handle has the same state object, so its callbacks' context is set once.
        let context = Unmanaged.passUnretained(transferState).toOpaque()
        for option in [CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_READDATA, CURLOPT_PREREQDATA] {
            set(option, pointer: context)
        }
        // Convey decodes gzip and deflate itself, checking their integrity, and hands any other
        // coding through undecoded; so curl neither asks for nor decodes anything.
        set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        // Only http and https, for the request and any redirect curl might follow. The string
        // options start at libcurl 7.85 (Ubuntu 22.04 has 7.81); older ones take a bit mask.
        let httpAndHTTPS = 1 << 0 | 1 << 1
        if set(CURLOPT_PROTOCOLS_STR, string: "http,https") != CURLE_OK { set(CURLOPT_PROTOCOLS, httpAndHTTPS) }
        if set(CURLOPT_REDIR_PROTOCOLS_STR, string: "http,https") != CURLE_OK { set(CURLOPT_REDIR_PROTOCOLS, httpAndHTTPS) }
        if let share = defaults.share {
            set(CURLOPT_SHARE, pointer: share)
            // An empty file name turns the cookie engine on without reading a file.
            if defaults.storesCookies { set(CURLOPT_COOKIEFILE, string: "") }
        }
        if let connections = defaults.connections {
            _ = convey_curl_easy_setopt_sockets(raw, curlOpenSocketCallback, curlCloseSocketCallback,
                                                Unmanaged.passUnretained(connections).toOpaque())
        }
        refusedSetting = defaults.connectionOptions.apply(to: self)
    }

    /// The header list the handle sent last, sent again while the fields stay the same.
    let headerList = CurlHeaderList()
    /// The response head's lines as curl delivered them, filled on the loop, read by the sender.
    var headBuffer: [UInt8] = []
    /// The response body, when the transfer defers delivery, filled on the loop, read by the sender.
    var bodyBuffer: [UInt8] = []
    /// Where a head's fields are collected while it is parsed, reused from one head to the next.
    var parseBuffer: [UInt8] = []
    /// What the loop alone touches while a transfer runs on this handle; curl's callbacks reach it.
    let transferState = CurlLoopBound(CurlTransferState(), binding: .anyLoop)

    /// The origin of the handle's last request, which the next one mostly shares.
    private var lastOrigin = ""

    /// `scheme://authority` of `address` (`CurlTransfer.origin(of:)`), the last one again when it is the same.
    func origin(of address: String) -> String {
        if !lastOrigin.isEmpty, address.utf8.starts(with: lastOrigin.utf8) {
            let rest = address.utf8.dropFirst(lastOrigin.utf8.count)
            if rest.first.map({ $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? true {
                return lastOrigin
            }
        }
        lastOrigin = CurlTransfer.origin(of: address)
        return lastOrigin
    }

    /// A connection option curl refused when the handle was made; such a handle never runs.
    private(set) var refusedSetting: CurlSetting?

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// The HTTP version this handle asks for; set only on a change, like the buffer size.
    var httpVersion = HTTPVersionPreference.automatic {
        didSet {
            guard httpVersion != oldValue else { return }
            // HTTP/3 is there only when the runtime libcurl was built with it: else ask as by default.
            if set(CURLOPT_HTTP_VERSION, httpVersion.curlValue) != CURLE_OK {
                set(CURLOPT_HTTP_VERSION, HTTPVersionPreference.automatic.curlValue)
            }
        }
    }

    /// Whether curl waits for a connection being set up to the same origin, to multiplex on it,
    /// rather than open another (`CURLOPT_PIPEWAIT`). Only where HTTP/2 may be negotiated: on a
    /// plain HTTP/1.1 origin libcurl 7.88 holds every other request to it until the first
    /// response is over, so slow concurrent responses would run one after another.
    var waitsToMultiplex = false {
        didSet {
            guard waitsToMultiplex != oldValue else { return }
            set(CURLOPT_PIPEWAIT, waitsToMultiplex ? 1 : 0)
        }
    }

    /// Whether curl reads the body 512 KiB at a time instead of its default 16 KiB: three times the
    /// throughput of a large download, about 5 µs more CPU for each small request. Set only on a
    /// change, since curl reallocates its buffer when the size changes.
    var readsInLargePieces = false {
        didSet {
            guard readsInLargePieces != oldValue else { return }
            set(CURLOPT_BUFFERSIZE, readsInLargePieces ? 512 * 1024 : 16 * 1024)
        }
    }

    /// Where the head of the request being sent is collected, for a request that asks for it
    /// (`CurlSentHead`); set only on a change, so a handle that never collects one never turns
    /// curl's debug output on.
    var sentHead: CurlSentHead? {
        didSet { if sentHead !== oldValue { CurlSentHead.collect(into: sentHead, on: self) } }
    }

    /// Forgets the last transfer's error message; its options are overwritten by the next one.
    func prepareForReuse() {
        errorBuffer[0] = 0
    }

    /// The options a request may change, as the handle last set them: each kept until a request differs.
    struct RequestSettings: Equatable {
        /// `CURLOPT_HTTPGET`, `CURLOPT_NOBODY` (HEAD) or `CURLOPT_POST` with the body's size.
        enum Shape: Equatable {
            case get
            case head
            case post(size: Int64)
        }

        var shape = Shape.get
        /// `CURLOPT_CUSTOMREQUEST`: the method when curl would send another, else `nil`.
        var customMethod: String?
        var connectTimeoutMilliseconds = 0
        var address = ""
        var headerList: UnsafeMutablePointer<curl_slist>?
    }

    /// What the handle's last request set; a new handle has curl's defaults.
    private(set) var settings = RequestSettings()

    /// Sets the options of `request` that differ from the last request's on this handle (the
    /// others stay as they were set), and empties the buffers for its response (keeping their
    /// room, unless an unusually large head took it). Returns whether Convey decodes the
    /// response's gzip or deflate body (not when the request asked for `identity`).
    func configure(for request: OutgoingRequest, address: String, bodySize: Int64?, connectTimeout: Duration,
                   expectsLargeBody: Bool) -> Bool {
        if headBuffer.capacity > Self.keptBufferCapacity { headBuffer = [] } else { headBuffer.removeAll(keepingCapacity: true) }
        bodyBuffer.removeAll(keepingCapacity: true)

        let method = request.method.rawValue
        var extras = CurlHeaderList.Extras()
        let decodesContent: Bool
        if let acceptEncoding = request.fields.first(named: "Accept-Encoding") {
            decodesContent = !acceptEncoding.equalsIgnoringASCIICase("identity")
        } else {
            decodesContent = true
            extras.insert(.acceptEncoding)
        }
        var wanted = RequestSettings()
        let sendsBody = method != "HEAD" && (bodySize != nil || method == "POST" || method == "PUT" || method == "PATCH")
        if method == "HEAD" {
            wanted.shape = .head
        } else if sendsBody {
            wanted.shape = .post(size: bodySize ?? 0)
            // curl labels every body form-encoded; URLSession only POST bodies.
            if method != "POST", !request.fields.contains(named: "Content-Type") { extras.insert(.blankContentType) }
            // No `Expect: 100-continue` round trip, as with URLSession.
            extras.insert(.blankExpect)
        }
        let methodCurlSends = method == "HEAD" ? "HEAD" : sendsBody ? "POST" : "GET"
        wanted.customMethod = method == methodCurlSends ? nil : method
        wanted.connectTimeoutMilliseconds = connectTimeout.curlMilliseconds
        wanted.address = address
        // The fields go out in the request's order, repeats as separate lines; the handle keeps
        // the list it sent last and sends it again when nothing changed.
        wanted.headerList = headerList.list(for: request.fields, extras: extras)
        apply(wanted)
        readsInLargePieces = expectsLargeBody
        return decodesContent
    }

    /// Sets each option of `wanted` that differs from the handle's.
    private func apply(_ wanted: RequestSettings) {
        if wanted.address != settings.address { set(CURLOPT_URL, string: wanted.address) }
        if wanted.connectTimeoutMilliseconds != settings.connectTimeoutMilliseconds {
            set(CURLOPT_CONNECTTIMEOUT_MS, wanted.connectTimeoutMilliseconds)
        }
        if wanted.shape != settings.shape {
            // Back to a plain GET first (this also clears NOBODY and UPLOAD), then the method.
            set(CURLOPT_HTTPGET, 1)
            switch wanted.shape {
            case .get: break
            case .head: set(CURLOPT_NOBODY, 1)
            case .post(let size):
                set(CURLOPT_POST, 1)
                set(CURLOPT_POSTFIELDSIZE_LARGE, offset: size)
            }
        }
        if wanted.customMethod != settings.customMethod {
            if let method = wanted.customMethod { set(CURLOPT_CUSTOMREQUEST, string: method) } else { set(CURLOPT_CUSTOMREQUEST, pointer: nil) }
        }
        if wanted.headerList != settings.headerList { set(CURLOPT_HTTPHEADER, list: wanted.headerList) }
        settings = wanted
    }

    /// The most room a buffer keeps from one transfer to the next.
    private static var keptBufferCapacity: Int { 16 * 1024 }

    /// curl's message for the last failure, empty when it gave none.
    var errorMessage: String {
        String(cString: errorBuffer)
    }

    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> CURLcode {
        convey_curl_easy_setopt_long(raw, option, value)
    }

    func set(_ option: CURLoption, offset value: Int64) {
        _ = convey_curl_easy_setopt_off(raw, option, curl_off_t(value))
    }

    /// Sets a string option; curl copies the string.
    @discardableResult
    func set(_ option: CURLoption, string value: String) -> CURLcode {
        value.withCString { convey_curl_easy_setopt_string(raw, option, $0) }
    }

    @discardableResult
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) -> CURLcode {
        convey_curl_easy_setopt_pointer(raw, option, value)
    }

    func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) {
        _ = convey_curl_easy_setopt_slist(raw, option, value)
    }

    func set(_ option: CURLoption, callback value: convey_curl_data_callback) {
        _ = convey_curl_easy_setopt_callback(raw, option, value)
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        return convey_curl_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    /// A string curl reports, such as its default CA file (`CURLINFO_CAINFO`); `nil` when it has none.
    func stringInfo(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard convey_curl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// The TLS version of the handle's connection (`TLSv1.3`), or `nil` without TLS or without
    /// OpenSSL; asked during the transfer, while the connection is surely open.
    var tlsVersion: String? {
        convey_curl_tls_version(raw).map { String(cString: $0) }
    }

    func offsetInfo(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = -1
        return convey_curl_easy_getinfo_off(raw, info, &value) == CURLE_OK ? Int64(value) : -1
    }
}
#endif
