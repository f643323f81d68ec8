import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The last request a manual task really sent, kept so that a failure can still say what was sent.
final class SentRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: URLRequest?

    var request: URLRequest? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
