import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A byte stream a WebSocket runs over, opened by the server's transport: `CurlRawConnection`
/// on Linux. Reading is pulled: the stream is read only while a `read()` waits.
protocol WebSocketWire: AnyObject, Sendable {
    /// The next bytes from the server; `nil` once it closed its side. One read at a time.
    func read() async throws -> [UInt8]?
    /// Writes `bytes` after every write before them; returns once the transport took them all.
    func write(_ bytes: [UInt8]) async throws
    /// Ends the stream at once; what waits fails. Safe to call twice, from any thread.
    func close()
}

/// Opens a WebSocket's byte stream on the transport that carries the run's requests, or refuses,
/// naming why, before anything is sent.
enum WebSocketWires {
    /// A stream to `url` on `transport`, with `head` (the opening request) written, within
    /// `connectTimeout`.
    static func open(_ url: URL, sending head: [UInt8], on transport: any ConveyTransport, connectTimeout: Duration) async throws -> any WebSocketWire {
        #if os(Linux) && canImport(CConveyCurlShim)
        if let curl = transport as? CurlTransport {
            return try await curl.rawConnection(to: url, sending: head, connectTimeout: connectTimeout)
        }
        #endif
        throw refusal(of: transport, url: url)
    }

    /// Why `transport` carries no WebSocket.
    static func refusal(of transport: any ConveyTransport, url: URL?) -> ConveyError {
        let reason = if transport is URLSessionTransport {
            #if canImport(FoundationNetworking)
            "URLSessionTransport on Linux cannot carry a WebSocket: FoundationNetworking's WebSocket task needs libcurl's WebSocket API, "
                + "which this system's libcurl does not have, and its stream task is not implemented. Use CurlTransport (the Linux default)"
            #else
            "URLSessionTransport does not carry WebSockets yet: Convey's framing needs a byte stream the transport opens with its own "
                + "TLS and proxy settings, which only CurlTransport gives today"
            #endif
        } else {
            "\(type(of: transport)) cannot carry a WebSocket: Convey opens WebSockets over CurlTransport's raw connections only"
        }
        return .webSocket(.unsupportedTransport, url: url, closeCode: nil, reason: reason)
    }
}

/// The bytes of a WebSocket after its 101 as a response body: what the upgrade step passes up the
/// chain, so that the steps above see the connection's bytes and its end (tracing's client span
/// ends with it, HAR capture writes its entry then). The connection reads it; writing goes to the
/// wire beside it.
///
/// The connection says how it ended (`end(with:)`) before it closes the wire: after the close
/// handshake, the read that ends it comes back empty; after a failure, the next read throws that
/// failure once, so that every step above sees how the connection ended.
final class WebSocketWireBody: BodySource {
    let url: URL?
    private let wire: any WebSocketWire
    private let timeout: Duration
    private let state: InlineLocked<State>

    private struct State: Sendable {
        /// Bytes that came with the head, read first.
        var leftover: [UInt8]
        /// How the connection ended, once it decided: `nil` error for the close handshake.
        var ending: Result<Void, any Error>?
        var ended = false
    }

    /// The bytes after the head on `wire`, starting with `leftover`; `timeout` names the idle
    /// timeout in a transport's error.
    init(wire: any WebSocketWire, leftover: [UInt8], url: URL?, timeout: Duration) {
        self.wire = wire
        self.url = url
        self.timeout = timeout
        state = InlineLocked(State(leftover: leftover))
    }

    func next() async throws -> Data? {
        let first: Result<[UInt8]?, any Error>? = state.withLock { state in
            if state.ended { return .success(nil) }
            if !state.leftover.isEmpty {
                defer { state.leftover = [] }
                return .success(state.leftover)
            }
            guard let ending = state.ending else { return nil }
            state.ended = true
            return ending.map { nil }
        }
        if let first { return try first.get().map { Data($0) } }
        do {
            guard let bytes = try await wire.read() else {
                state.withLock { $0.ended = true }
                return nil
            }
            return Data(bytes)
        } catch {
            // The connection decided how it ended while the read waited (closing the wire ends the read).
            let ending: Result<Void, any Error>? = state.withLock { state in
                state.ended = true
                return state.ending
            }
            switch ending {
            case .success?: return nil
            case .failure(let failure)?: throw failure
            case nil: throw TransportErrors.map(error, url: url, timeout: timeout)
            }
        }
    }

    /// Says how the connection ended: after the close handshake (`nil`), or with `failure`,
    /// which the next read throws. The first ending counts.
    func end(with failure: (any Error)?) {
        state.withLock { state in
            if state.ending == nil { state.ending = failure.map { .failure($0) } ?? .success(()) }
        }
    }

    func close() {
        end(with: nil)
        wire.close()
    }

    func cancel() {
        end(with: ConveyError.cancelled)
        wire.close()
    }
}
