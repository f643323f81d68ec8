#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim
internal import CCurl
import Dispatch
import Synchronization

/// The connections of one transport, for the requests that carry a `ConnectionObserver`: each
/// connection such a request opens is reported to its observer until it closes, active while
/// requests use it and idle in libcurl's pool between them.
///
/// libcurl tells it of sockets through the socket callbacks of every handle of the transport
/// (`curlOpenSocketCallback`, `curlCloseSocketCallback`), whose context is this tracker: a
/// connection keeps the callbacks of the handle that opened it, and closes long after that
/// handle's request, from the pool, when the server or libcurl ends it, or when the transport
/// goes away. Of the sockets happy eyeballs opens for one connection, the one whose ports match
/// those of the connection a request then goes out on (`CURLOPT_PREREQFUNCTION`) is the
/// connection; the others close unreported.
///
/// Its state is behind a lock, not bound to a loop: a transport with several loops opens
/// connections on each, and one on the shared loop closes its last connections on whichever
/// thread releases it (`curl_share_cleanup`). An observer that may be app code (an app's metrics
/// exporter) is never called here: each event goes to a serial queue of the tracker's own, in
/// order. One whose calls are brief (`callsAreBrief`: the built-in aggregator) is called in place,
/// sparing a hand-off and a thread's wake-up per event.
final class CurlConnectionTracker: Sendable {
    /// A connection's ends as a request going out on it sees them; the remote address is hashed,
    /// so that telling connections apart builds no string.
    struct Endpoints: Hashable {
        var localPort: Int32
        var remotePort: Int32
        var remoteAddress: UInt64

        /// The ends `CURLOPT_PREREQFUNCTION` reports.
        init(remoteAddress: UnsafePointer<CChar>?, remotePort: Int32, localPort: Int32) {
            self.localPort = localPort
            self.remotePort = remotePort
            // FNV-1a over the address's text.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            if var byte = remoteAddress {
                while byte.pointee != 0 {
                    hash = (hash ^ UInt64(UInt8(bitPattern: byte.pointee))) &* 0x0000_0100_0000_01b3
                    byte += 1
                }
            }
            self.remoteAddress = hash
        }
    }

    /// A connection reported, or to be reported, to the observer of the request that opened it.
    private struct Connection {
        let observer: any ConnectionObserver
        var connection: TransportConnection
        /// When its socket was opened, on `CurlClock`.
        let openedAt: UInt64
        let endpoints: Endpoints
        /// How many transfers use it now: more than one over HTTP/2.
        var users: Int
        /// Whether its observer has heard it opened: once its protocol version is known (its first
        /// response's head), or once it goes idle or closes without one.
        var reported: Bool

        var state: TransportConnection.State { users > 0 ? .active : .idle }
    }

    private struct State {
        /// Sockets opened and not (yet) known as a tracked connection, with when they opened.
        var opening: [curl_socket_t: UInt64] = [:]
        var connections: [curl_socket_t: Connection] = [:]
        var sockets: [Endpoints: curl_socket_t] = [:]
        /// The connection each handle's transfer uses, by handle.
        var users: [ObjectIdentifier: curl_socket_t] = [:]
    }

    private let state = CurlLocked(State())
    /// How many connections are tracked: read without the lock, so that a request with no
    /// observer on a transport that tracks nothing costs nothing more.
    private let tracked = Atomic<Int>(0)
    /// Where the observers are called, one event at a time, in the order they happened.
    private let delivery = DispatchQueue(label: "convey.curl.connections")

    /// Whether any connection is tracked.
    var isTracking: Bool { tracked.load(ordering: .relaxed) > 0 }

    /// libcurl opened `socket` for a connection.
    func opened(_ socket: curl_socket_t) {
        let now = CurlClock.now
        state.withLock { $0.opening[socket] = now }
    }

    /// libcurl is about to close `socket`: a tracked connection's observer hears it closed.
    func closing(_ socket: curl_socket_t) {
        let now = CurlClock.now
        state.withLock { state in
            if state.opening.removeValue(forKey: socket) != nil { return }
            guard var closed = state.connections.removeValue(forKey: socket) else { return }
            state.sockets[closed.endpoints] = nil
            for (handle, used) in state.users where used == socket { state.users[handle] = nil }
            tracked.subtract(1, ordering: .relaxed)
            reportOpened(&closed)
            let observer = closed.observer, connection = closed.connection, closedState = closed.state
            let openFor = Duration.nanoseconds(Int64(clamping: now &- closed.openedAt))
            deliver(to: observer) { observer.connectionClosed(connection, state: closedState, openFor: openFor) }
        }
    }

    /// The transfer of `handle` is about to send its request on the connection at `endpoints`:
    /// a new one (`isNew`) is tracked for `observer`; a tracked one it reuses becomes active.
    /// Returns whether the transfer uses a tracked connection, and whether that connection waits
    /// for a response's head to be reported (`headReceived`).
    func transferConnected(_ handle: ObjectIdentifier, isNew: Bool, endpoints: Endpoints, observer: (any ConnectionObserver)?,
                           connection: TransportConnection?) -> (tracked: Bool, unreported: Bool) {
        state.withLock { state in
            // A request sent again on a fresh connection leaves the one it tried first.
            if let previous = state.users.removeValue(forKey: handle) { release(previous, in: &state) }
            if let socket = state.sockets[endpoints], var reused = state.connections[socket] {
                state.users[handle] = socket
                reused.users += 1
                if reused.users == 1, reused.reported {
                    let observer = reused.observer, connection = reused.connection
                    deliver(to: observer) { observer.connectionChanged(connection, from: .idle, to: .active) }
                }
                state.connections[socket] = reused
                return (true, !reused.reported)
            }
            guard isNew, let observer, let connection else { return (false, false) }
            let match = state.opening.first { socket, _ in
                var local: Int32 = -1, remote: Int32 = -1
                return convey_socket_ports(socket, &local, &remote) == 0 && local == endpoints.localPort && remote == endpoints.remotePort
            }
            guard let (socket, openedAt) = match.map({ ($0.key, $0.value) }) else { return (false, false) }
            state.opening[socket] = nil
            state.connections[socket] = Connection(observer: observer, connection: connection, openedAt: openedAt, endpoints: endpoints,
                                                   users: 1, reported: false)
            state.sockets[endpoints] = socket
            state.users[handle] = socket
            tracked.add(1, ordering: .relaxed)
            return (true, true)
        }
    }

    /// The transfer of `handle` received its response's head over `version` (`CURLINFO_HTTP_VERSION`):
    /// its connection, new, is reported opened with that protocol version.
    func headReceived(_ handle: ObjectIdentifier, version: Int) {
        state.withLock { state in
            guard let socket = state.users[handle], var connection = state.connections[socket], !connection.reported else { return }
            connection.connection.protocolVersion = Self.protocolVersion(version)
            reportOpened(&connection)
            state.connections[socket] = connection
        }
    }

    /// The transfer of `handle` ended: its connection, if still open and used by no other, goes idle.
    func transferEnded(_ handle: ObjectIdentifier) {
        state.withLock { state in
            guard let socket = state.users.removeValue(forKey: handle) else { return }
            release(socket, in: &state)
        }
    }

    /// One transfer less uses the connection of `socket`.
    private func release(_ socket: curl_socket_t, in state: inout State) {
        guard var connection = state.connections[socket] else { return }
        connection.users -= 1
        if connection.users == 0 {
            if connection.reported {
                let observer = connection.observer, reported = connection.connection
                deliver(to: observer) { observer.connectionChanged(reported, from: .active, to: .idle) }
            } else {
                reportOpened(&connection)
            }
        }
        state.connections[socket] = connection
    }

    /// Makes `call` to `observer` in place when its calls are brief, else on the tracker's queue.
    /// An observer's calls all go one way, so each connection's events keep their order.
    private func deliver(to observer: any ConnectionObserver, _ call: @escaping @Sendable () -> Void) {
        if observer.callsAreBrief { call() } else { delivery.async(execute: call) }
    }

    /// Tells the observer `connection` opened, in the state it is in now, unless it heard so already.
    private func reportOpened(_ connection: inout Connection) {
        guard !connection.reported else { return }
        connection.reported = true
        let observer = connection.observer, opened = connection.connection, state = connection.state
        deliver(to: observer) { observer.connectionOpened(opened, state: state) }
    }

    /// `network.protocol.version` for a `CURLINFO_HTTP_VERSION`; `nil` before any response.
    static func protocolVersion(_ version: Int) -> String? {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: nil
        }
    }
}

/// `CURLOPT_OPENSOCKETFUNCTION`: opens the socket as libcurl would, and notes it. Its context is
/// the transport's `CurlConnectionTracker`, which outlives every connection of the transport.
let curlOpenSocketCallback: convey_curl_opensocket_callback = { context, purpose, address in
    guard let address else { return -1 }
    let socket = convey_curl_open_socket(address)
    // 0: CURLSOCKTYPE_IPCXN, a connection's socket.
    if socket >= 0, purpose == 0, let context {
        Unmanaged<CurlConnectionTracker>.fromOpaque(context).takeUnretainedValue().opened(socket)
    }
    return socket
}

/// `CURLOPT_CLOSESOCKETFUNCTION`: forgets the socket, reporting its connection closed, then closes
/// it, so that its number is not reused before it is forgotten.
let curlCloseSocketCallback: convey_curl_closesocket_callback = { context, socket in
    if let context { Unmanaged<CurlConnectionTracker>.fromOpaque(context).takeUnretainedValue().closing(socket) }
    return convey_curl_close_socket(socket)
}
#endif
