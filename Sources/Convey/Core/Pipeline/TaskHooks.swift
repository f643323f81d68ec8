import Foundation

/// The task hooks the pipeline calls after a request is built, one bit each.
enum TaskHook: Int, CaseIterable, Sendable {
    case willSendRequest, didReceiveResponse, didFail, didFinish, didSucceed, retryInterval, echoStyleForData
}

/// Which hooks of one task type are known to be the defaults and which your own.
///
/// Swift cannot say whether a type implements a protocol requirement or takes its default, so
/// Convey finds out by calling: every default implementation reports itself to the probe the
/// call runs under (`HookProbe`), naming its task type and hook. A hook whose default ran is the
/// default for that type for good, since a type's implementations are fixed when it is compiled;
/// any other outcome (your hook ran, or the probe saw nothing) keeps it called. So a hook is
/// skipped only once its default was seen running for that very type, and never stops being
/// called because of what Convey guessed.
struct KnownHooks: Sendable {
    private var defaults: UInt16 = 0

    /// Whether `hook` must be called: it is not known to be the default.
    func mustCall(_ hook: TaskHook) -> Bool { defaults & (1 << hook.rawValue) == 0 }

    fileprivate mutating func noteDefault(_ hook: TaskHook) { defaults |= 1 << hook.rawValue }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var table: [ObjectIdentifier: KnownHooks] = [:]

    /// What is known of `type`'s hooks.
    static func of(_ type: Any.Type) -> KnownHooks {
        lock.withLock { table[ObjectIdentifier(type)] ?? KnownHooks() }
    }

    /// Records that `hook`'s default ran for `type`.
    static func defaultRan(_ hook: TaskHook, of type: Any.Type) {
        lock.withLock { table[ObjectIdentifier(type), default: KnownHooks()].noteDefault(hook) }
    }
}

/// The probe a hook call runs under: the default implementations report to it.
enum HookProbe {
    /// The call being probed, if any.
    @TaskLocal static var call: ProbedCall?

    /// Called by each default implementation: records that the default of `hook` ran for `type`
    /// when that is exactly the call being probed (a hook of another task, called from inside
    /// yours, is not mistaken for it).
    static func defaultRan(_ hook: TaskHook, of type: Any.Type) {
        guard let call, call.hook == hook, call.type == ObjectIdentifier(type) else { return }
        KnownHooks.defaultRan(hook, of: type)
    }

    /// One probed call: which hook of which type.
    struct ProbedCall: Sendable {
        let hook: TaskHook
        let type: ObjectIdentifier
    }
}

/// Calls a task's hooks on `@ConveyActor`, each under the probe while it is not known.
@ConveyActor
enum Hooks {
    /// Calls `body` (a call of `hook` on a task of type `T`) under the probe.
    static func call<T, Result>(_ hook: TaskHook, of type: T.Type, _ body: () async throws -> Result) async rethrows -> Result {
        try await HookProbe.$call.withValue(HookProbe.ProbedCall(hook: hook, type: ObjectIdentifier(type))) {
            try await body()
        }
    }

    /// Calls a synchronous hook under the probe.
    static func callNow<T, Result>(_ hook: TaskHook, of type: T.Type, _ body: () throws -> Result) rethrows -> Result {
        try HookProbe.$call.withValue(HookProbe.ProbedCall(hook: hook, type: ObjectIdentifier(type))) {
            try body()
        }
    }
}
