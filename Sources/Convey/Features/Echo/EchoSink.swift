import Foundation

/// Where console echo goes. Set one on `ServerConfiguration.echoSink`.
public protocol EchoSink: Sendable {
    /// Writes one echo block; `text` has no trailing newline, and no control character a terminal
    /// acts on (`DisplayFormat.terminalSafe`).
    func write(_ text: String)
}

/// Writes echo to standard output, one whole block at a time so that blocks never interleave.
public struct StandardOutputEchoSink: EchoSink {
    /// Creates the sink.
    public init() {}

    public func write(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// Hands each echo block to a closure: for loggers, tests and UIs.
public struct ClosureEchoSink: EchoSink {
    private let handler: @Sendable (String) -> Void

    /// Creates a sink that calls `handler` with each block.
    public init(_ handler: @escaping @Sendable (String) -> Void) {
        self.handler = handler
    }

    public func write(_ text: String) { handler(text) }
}
