import Foundation

/// Where an upload body's bytes go as it is written, chunk by chunk: memory, a staged file, or
/// gzip in front of either. Writers never need the whole body at once.
protocol BodySink {
    /// Appends bytes to the body.
    mutating func write(_ bytes: Data) throws
    /// Flushes anything buffered; nothing is written after it.
    mutating func finish() throws
}

/// Collects a body in memory, for bodies small enough to send as `httpBody`.
struct MemorySink: BodySink {
    /// The body written so far.
    private(set) var data = Data()

    mutating func write(_ bytes: Data) { data.append(bytes) }
    mutating func finish() {}
}
