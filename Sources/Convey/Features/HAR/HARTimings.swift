extension HAREntry.Timings {
    /// HAR's phases from Convey's metrics, which count each point from the start of the exchange
    /// (as curl does): dns up to the name lookup, connect from there to the connection (with TLS,
    /// as HAR asks), ssl the TLS handshake alone, wait up to the first byte (sending included:
    /// no transport measures it apart, so send is -1), receive from there to the end. blocked is
    /// never measured. A phase whose points the transport did not report is -1, and so are dns,
    /// connect and ssl on a reused connection, where they did not happen.
    init(_ metrics: ExchangeMetrics) {
        self.init()
        let lookup = metrics.nameLookup.map(HAREntry.milliseconds)
        let connected = metrics.connect.map(HAREntry.milliseconds)
        let secured = metrics.tlsHandshake.map(HAREntry.milliseconds)
        let firstByte = metrics.firstByte.map(HAREntry.milliseconds)
        let total = metrics.total.map(HAREntry.milliseconds)
        if metrics.reusedConnection != true {
            if let lookup { dns = lookup }
            if let ready = secured ?? connected { connect = max(0, ready - (lookup ?? 0)) }
            if let secured, let connected { ssl = max(0, secured - connected) }
        }
        if let firstByte { wait = max(0, firstByte - (secured ?? connected ?? lookup ?? 0)) }
        if let firstByte, let total { receive = max(0, total - firstByte) }
    }
}
