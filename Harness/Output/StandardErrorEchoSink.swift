@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Sends Convey's echo to standard error, keeping standard output for the result.
let standardErrorEcho: @Sendable (String) -> Void = { text in FileHandle.standardError.write(Data((text + "\n").utf8)) }
