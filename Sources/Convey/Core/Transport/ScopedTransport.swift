/// A transport put in place of a server's own for the runs inside a scope, such as one test.
///
/// The scope is a task-local value, so it reaches every run started inside it (child tasks and
/// `Task {}` too) and nothing outside it: tests running in parallel each see their own. A run
/// reads the scope once, when it is planned (`RunPlan`), and asks it for the transport of each
/// hop, with the server's own transport (where a replacement sends what it does not answer
/// itself) and who is sending.
enum ScopedTransport {
    /// Makes the transport for one hop from the server's own transport and the hop's origin;
    /// `nil` outside any scope.
    typealias Replacement = @Sendable (_ serverTransport: any ConveyTransport, _ origin: ExchangeOrigin) -> any ConveyTransport

    @TaskLocal static var replacement: Replacement?


}

/// Which task and attempt an exchange belongs to, for transports that keep what they send.
struct ExchangeOrigin: Sendable, Hashable {
    /// The task's type name, such as `FetchUserTask`.
    let taskType: String
    /// The attempt of the run: 1 for the first, 2 after one retry.
    let attempt: Int
}
