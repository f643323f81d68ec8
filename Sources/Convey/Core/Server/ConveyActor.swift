/// The global actor that servers, task hooks and run bookkeeping run on.
///
/// An ordinary actor on every platform, on Swift's global executor: never the thread that moves
/// sockets (`CurlTransport`'s event loop), so app code on the actor, even code that blocks for a
/// while, never stalls a transfer or makes another task's idle timeout fire. Code on the actor
/// still runs one piece at a time: blocking it delays every run's next step (not its bytes).
/// JSON of any size is encoded, and bodies over 16 KiB decoded, off the actor.
@globalActor
public actor ConveyActor {
    /// The one instance behind `@ConveyActor`.
    public static let shared = ConveyActor()
}
