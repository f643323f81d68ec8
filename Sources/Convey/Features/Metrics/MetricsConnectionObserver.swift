/// The metrics step's `ConnectionObserver`: what a transport reports of its connections, as
/// `http.client.open_connections` and `http.client.connection.duration` on the server's recorder.
struct MetricsConnectionObserver: ConnectionObserver {
    let recorder: MetricsRecorder

    /// Brief when the measurements go into the built-in exporter's aggregator (a short lock, no
    /// app code); an app's exporter is app code, called off the transport's I/O thread.
    var callsAreBrief: Bool { recorder.aggregatesItself }

    func connectionOpened(_ connection: TransportConnection, state: TransportConnection.State) {
        recorder.connectionOpened(Self.attributes(of: connection), state: Self.state(state))
    }

    func connectionChanged(_ connection: TransportConnection, from old: TransportConnection.State, to new: TransportConnection.State) {
        recorder.connectionChanged(Self.attributes(of: connection), from: Self.state(old), to: Self.state(new))
    }

    func connectionClosed(_ connection: TransportConnection, state: TransportConnection.State, openFor: Duration) {
        recorder.connectionClosed(Self.attributes(of: connection), state: Self.state(state), duration: openFor)
    }

    /// Host, port, scheme and protocol version, as the connection instruments name them.
    private static func attributes(of connection: TransportConnection) -> MetricAttributes {
        MetricAttributes(serverAddress: connection.host, serverPort: connection.port, scheme: connection.scheme,
                         protocolVersion: connection.protocolVersion)
    }

    private static func state(_ state: TransportConnection.State) -> MetricAttributes.ConnectionState {
        switch state {
        case .active: .active
        case .idle: .idle
        }
    }
}
