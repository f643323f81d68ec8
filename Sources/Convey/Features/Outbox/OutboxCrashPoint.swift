import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The named steps of an enqueue and a delivery where the durability tests kill the process.
///
/// In debug builds only, `CONVEY_OUTBOX_KILL_AT=STEP` in the environment makes the process send
/// itself `SIGKILL` when it reaches that step, so a test kills it at exactly that point instead of
/// guessing with a timer. Release builds compile every check away.
enum OutboxCrashPoint: String, CaseIterable, Sendable {
    /// An enqueue wrote and synced its temporary file, before renaming it into place.
    case enqueueWritten = "enqueue-written"
    /// An enqueue renamed its file into place, before syncing the folder.
    case enqueueRenamed = "enqueue-renamed"
    /// An attempt was counted in the item's state, before its request was built and sent.
    case attemptStarted = "attempt-started"
    /// A response arrived, before the item was marked delivered.
    case responseReceived = "response-received"
    /// The delivered state was renamed into place, before the folder was synced.
    case deliveredWritten = "delivered-written"

    /// Dies here when the environment names this step (debug builds only).
    func reach() {
        #if DEBUG
        if Self.chosen == self { kill(getpid(), SIGKILL) }
        #endif
    }

    #if DEBUG
    private static let chosen = ProcessInfo.processInfo.environment["CONVEY_OUTBOX_KILL_AT"].flatMap(OutboxCrashPoint.init(rawValue:))
    #endif
}
