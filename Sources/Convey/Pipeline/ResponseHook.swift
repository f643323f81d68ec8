import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls a task's `didReceiveResponse(response:data:)` without building an `HTTPURLResponse` for
/// tasks that never look at it.
///
/// Building one costs tens of microseconds on Linux (Foundation normalises every field name),
/// more than the rest of a run. The default hook does nothing but mark `probe`, so the first run
/// of a task type tells whether its hook is the default; later runs of such a type skip the
/// call. A task with its own hook gets it on every run.
@ConveyActor
enum ResponseHook {
    /// Set around a hook call; the default hook marks it.
    @TaskLocal static var probe: Probe?

    /// Whether the default hook ran.
    @ConveyActor
    final class Probe {
        var reachedDefault = false
    }

    /// Task types whose hook is the default.
    private(set) static var typesWithDefaultHook: Set<ObjectIdentifier> = []

    static func call<T: DownloadingTask>(_ task: T, head: ResponseHead, data: Data) async throws {
        let type = ObjectIdentifier(T.self)
        guard !typesWithDefaultHook.contains(type) else { return }
        let probe = Probe()
        try await $probe.withValue(probe) {
            try await task.didReceiveResponse(response: head.makeHTTPURLResponse(), data: data)
        }
        if probe.reachedDefault { typesWithDefaultHook.insert(type) }
    }
}
