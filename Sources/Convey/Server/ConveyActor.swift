/// The global actor that servers, task hooks and session bookkeeping run on.
///
/// Only bookkeeping runs here: transfers happen in the transport, and JSON encoding and
/// decoding run off the actor, so many tasks in flight never queue behind one another.
@globalActor
public actor ConveyActor {
    /// The one instance behind `@ConveyActor`.
    public static let shared = ConveyActor()
}
