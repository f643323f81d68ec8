import Convey
import Foundation

/// Sends Convey's echo to standard error, keeping standard output for the result.
struct StandardErrorEchoSink: EchoSink {
    func write(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
