#if os(Linux) && canImport(CConveyCurlShim)
internal import CConveyCurlShim

/// State that only an event loop's thread touches, as NIO's `NIOLoopBoundBox`: every access
/// asserts, in debug builds, that it runs on that thread, so a stray access from a sender's
/// thread stops the tests instead of racing. Release builds check nothing.
///
/// Bound either to one loop (`.ownLoop`: the loop's own state, whose thread marks itself with
/// this box when it starts, `markCurrentThread`) or to whichever loop is calling (`.anyLoop`: a
/// transfer's state, kept by its handle, which may run on any of its transport's loops, one at a
/// time). What crosses to other threads goes through the loop's inbox (in) and the transfer's
/// hand-off (out), never through this.
final class CurlLoopBound<Value>: @unchecked Sendable {  // guarded by: the event loop's thread, asserted in debug
    /// Which threads may touch the value.
    enum Binding {
        /// The thread of the loop that marked itself with this box.
        case ownLoop
        /// Any event loop's thread.
        case anyLoop
    }

    private var stored: Value
    private let binding: Binding

    /// Binds `value`; made on any thread, since nothing touches the value until a loop does.
    init(_ value: Value, binding: Binding) {
        stored = value
        self.binding = binding
    }

    /// The value; on the bound thread only.
    var value: Value {
        _read {
            assertOnLoop()
            yield stored
        }
        _modify {
            assertOnLoop()
            yield &stored
        }
    }

    /// Marks the calling thread as the loop's own (`.ownLoop`); the loop's thread calls it once, first.
    func markCurrentThread() {
        convey_event_loop_mark_current_thread(Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the calling thread is the one that marked itself with this box.
    var isCurrentThread: Bool {
        convey_event_loop_current() == UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the calling thread may touch the value.
    var isBoundThread: Bool {
        switch binding {
        case .ownLoop: isCurrentThread
        case .anyLoop: CurlEventLoop.isOnAnEventLoop
        }
    }

    /// Stops a debug build when called off the bound thread.
    func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isBoundThread, "an event loop's state touched off its thread", file: file, line: line)
    }
}
#endif
