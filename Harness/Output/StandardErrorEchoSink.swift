import Convey
import Foundation

extension EchoSink {
    /// Sends Convey's echo to standard error, keeping standard output for the result.
    static var standardError: EchoSink {
        EchoSink { text in FileHandle.standardError.write(Data((text + "\n").utf8)) }
    }
}
