import Foundation

/// Where console echo goes (`ServerConfiguration.echoSink`): standard output unless set.
///
/// ```swift
/// configuration.echoSink = EchoSink { text in logger.debug("\(text)") }
/// ```
public struct EchoSink: Sendable {
    private let handler: @Sendable (String) -> Void

    /// A sink that hands each echo block to `write`, from any thread: text without a trailing
    /// newline, and without a control character a terminal acts on.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        handler = write
    }

    /// Standard output, one whole block at a time so that blocks never interleave: the default.
    public static var standardOutput: EchoSink {
        EchoSink { text in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    /// Writes one echo block.
    func write(_ text: String) { handler(text) }
}
