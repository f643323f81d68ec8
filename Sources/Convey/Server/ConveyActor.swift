/// The global actor that servers, task hooks and run bookkeeping run on.
///
/// On Linux its executor is the thread of the curl event loop (`CurlTransport`), so a run starts
/// its transfer and is resumed with the response without crossing threads. Only bookkeeping runs
/// here: JSON of any size is encoded and large bodies are decoded off the actor, so many tasks in
/// flight never queue behind one another. Code on the actor must not block: while it runs, no
/// transfer moves.
@globalActor
public actor ConveyActor {
    /// The one instance behind `@ConveyActor`.
    public static let shared = ConveyActor()

    #if canImport(CConveyCurlShim)
    /// The curl event loop's thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        CurlEventLoop.shared.asUnownedSerialExecutor()
    }
    #endif
}

extension ConveyActor {
    /// The task executor a run prefers while it waits for its exchange: the event loop on Linux, so
    /// that the run resumes on the loop's thread, not through the global pool. `nil` elsewhere.
    static var exchangeExecutor: (any TaskExecutor)? {
        #if canImport(CConveyCurlShim)
        CurlEventLoop.shared.taskExecutor
        #else
        nil
        #endif
    }
}
