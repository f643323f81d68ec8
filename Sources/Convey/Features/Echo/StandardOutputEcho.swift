import Foundation

/// Where console echo goes unless `ServerConfiguration.echoSink` says otherwise.
@usableFromInline
enum StandardOutputEcho {
    /// Writes one echo block to standard output, whole, so that blocks never interleave.
    @usableFromInline
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
