@_spi(Transport) @_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The last request a manual task really sent, kept so that a failure can still say what was sent.
final class SentRequest: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var stored: OutgoingRequest?

    var request: OutgoingRequest? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
