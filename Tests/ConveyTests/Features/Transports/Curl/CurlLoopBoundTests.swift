#if canImport(CConveyCurlShim)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// State only an event loop's thread may touch stops a debug build when another thread touches it.
struct CurlLoopBoundTests {
    #if DEBUG
    @Test func aTransfersLoopStateTouchedOffTheLoopStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let state = CurlLoopBound(CurlTransferState(), binding: .anyLoop)
            state.value.isPaused = true
        }
    }

    @Test func aLoopsOwnStateTouchedOnAnotherThreadStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let state = CurlLoopBound(0, binding: .ownLoop)
            state.value += 1
        }
    }
    #endif

    @Test func aThreadMarkedWithTheStateMayTouchIt() async {
        let state = CurlLoopBound(0, binding: .ownLoop)
        let thread = Thread {
            state.markCurrentThread()
            state.value += 1
        }
        thread.start()
        while !thread.isFinished { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(!state.isCurrentThread)
    }
}
#endif
