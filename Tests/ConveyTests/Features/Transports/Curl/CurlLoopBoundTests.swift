#if os(Linux) && canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Which threads may touch state bound to an event loop: the thread every access asserts it is on
/// (in debug builds; `assertOnLoop` stops the build anywhere else).
struct CurlLoopBoundTests {
    /// Runs `body` on a thread of its own and returns what it returned.
    private func onAThreadOfItsOwn(_ body: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func aLoopsOwnStateIsBoundToTheThreadItMarkedOnly() async {
        let state = CurlLoopBound(0, binding: .ownLoop)
        #expect(!state.isBoundThread)
        #expect(await onAThreadOfItsOwn {
            state.markCurrentThread()
            state.value += 1
            return state.isBoundThread
        })
        #expect(await onAThreadOfItsOwn { state.isBoundThread } == false, "another thread")
        #expect(!state.isBoundThread)
    }

    @Test func aTransfersStateIsBoundToEveryEventLoopThreadAndNoOther() async {
        let transfer = CurlLoopBound(CurlTransferState(), binding: .anyLoop)
        let someLoop = CurlLoopBound(0, binding: .ownLoop)
        #expect(!transfer.isBoundThread)
        #expect(await onAThreadOfItsOwn { transfer.isBoundThread } == false, "a thread of no loop")
        #expect(await onAThreadOfItsOwn {
            someLoop.markCurrentThread()
            return transfer.isBoundThread
        }, "a loop's thread")
    }
}
#endif
