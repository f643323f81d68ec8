/// The global actor that servers and tasks (their properties and hooks) run on.
///
/// An ordinary actor on every platform, on Swift's global executor: never the thread that moves
/// sockets (`CurlTransport`'s event loop), so app code on the actor, even code that blocks for a
/// while, never stalls a transfer or makes another task's idle timeout fire. Code on the actor
/// still runs one piece at a time: blocking it delays every run's next visit (not its bytes).
/// Runs themselves (stages, their state machine, encoding and decoding) never take steps here:
/// a run visits the actor only to read its task and to call hooks its task or server overrides.
@globalActor
public actor ConveyActor {
    /// The one instance behind `@ConveyActor`.
    public static let shared = ConveyActor()
}
