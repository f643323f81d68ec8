@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// The hooks a demo step's tasks and server called, in order.
final class HookLog: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var entries: [(hook: String, detail: String)] = []

    func add(_ hook: String, _ detail: String) { lock.withLock { entries.append((hook, detail)) } }

    /// The entries so far, emptying the log for the next step.
    func drain() -> [(hook: String, detail: String)] {
        lock.withLock {
            defer { entries.removeAll() }
            return entries
        }
    }
}

/// Collects Convey's echo output for a demo step.
final class WireLog: @unchecked Sendable {  // guarded by: its NSLock
    private let lock = NSLock()
    private var blocks: [String] = []

    func write(_ text: String) { lock.withLock { blocks.append(text) } }

    /// The sink that writes here, for `ServerConfiguration.echoSink`.
    var sink: @Sendable (String) -> Void { { [self] text in write(text) } }

    /// The blocks so far, emptying the log for the next step.
    func drain() -> [String] {
        lock.withLock {
            defer { blocks.removeAll() }
            return blocks
        }
    }
}
