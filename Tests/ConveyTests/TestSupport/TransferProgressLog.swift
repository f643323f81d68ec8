import Foundation
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Collects transport progress reports from any thread.
final class TransferProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [TransferProgress] = []

    func add(_ progress: TransferProgress) { lock.withLock { items.append(progress) } }

    var reports: [TransferProgress] { lock.withLock { items } }
}
