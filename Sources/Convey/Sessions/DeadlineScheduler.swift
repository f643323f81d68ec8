/// Ends runs at their total timeout with one sleeping task for all of them, so a deadline costs a
/// dictionary insert, not a timer per run. URLSession on Linux ignores its own resource timeout.
///
/// The timer is only moved earlier, never cancelled when the last run ends: runs mostly finish long
/// before their deadline, and the next run's deadline is usually later, so the armed timer serves it.
@ConveyActor
final class DeadlineScheduler {
    static let shared = DeadlineScheduler()

    private var sessions: [ObjectIdentifier: ConveySession] = [:]
    private var timer: Task<Void, Never>?
    private var wakeAt: ContinuousClock.Instant?

    func watch(_ session: ConveySession) {
        guard let deadline = session.deadline else { return }
        sessions[ObjectIdentifier(session)] = session
        if let wakeAt, wakeAt <= deadline { return }
        schedule(at: deadline)
    }

    func forget(_ session: ConveySession) {
        sessions[ObjectIdentifier(session)] = nil
    }

    private func schedule(at instant: ContinuousClock.Instant) {
        timer?.cancel()
        wakeAt = instant
        timer = Task { [weak self] in
            guard (try? await Task.sleep(until: instant)) != nil else { return }
            self?.expireDue()
        }
    }

    private func expireDue() {
        let now = ContinuousClock.now
        timer = nil
        wakeAt = nil
        for session in sessions.values where (session.deadline ?? now) <= now {
            sessions[ObjectIdentifier(session)] = nil
            session.expire()
        }
        if let next = sessions.values.compactMap(\.deadline).min() { schedule(at: next) }
    }
}
