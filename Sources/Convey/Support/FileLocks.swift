/// Convey's file locks around the app's suspension.
///
/// iOS ends an app that is suspended while it holds a file lock (termination reason `0xdead10cc`);
/// the reports name files in a shared container, such as an App Group folder an app and its
/// extension share, but Apple's documentation of the reason names any file lock, and no API tells
/// such a folder from another. Two of Convey's files are locked for long: an outbox's folder
/// (`.lock`, held while it delivers) and a download's partial file (held for each attempt).
/// Releasing them, whatever their folder, lets the app be suspended safely; retaking them lets it
/// go on afterwards.
///
/// In an app on iOS, tvOS and visionOS this happens by itself: the locks are released when the
/// app enters the background, or at once when it was launched into the background, and retaken
/// when it returns to the foreground. App extensions (which get no such notifications) and apps
/// on other platforms call these methods themselves, for example from their own lifecycle
/// handlers. So does an app that delivers in the background (a background refresh, a push, a
/// `BGTaskScheduler` task): it retakes the locks first and releases them before it tells the
/// system it is done, and in the task's expiration handler. See Docs/outbox.md and Docs/downloads.md.
///
/// While released, an outbox starts no attempt; its attempts in flight are stopped (their items
/// stay pending, to be sent again with the same key), except on a server that
/// `finishesRunsInBackground`, whose attempts finish first while the system grants the time.
/// `run()` waits to retake the folder, for as long as another process holds it;
/// `deliverPending` returns, or throws `ConveyError.outboxFolderInUse` saying why it could not
/// finish. A download's writes go on, and one that another process took the partial file from
/// meanwhile fails with `ConveyError.downloadFailed` when it is retaken.
public enum FileLocks {
    /// Lets go of every file lock Convey holds in this process; returns once they are let go of.
    public static func releaseForSuspension() async {
        await FileLockRegistry.current.releaseAll()
    }

    /// Takes the locks again; returns once each is taken or, for a download whose partial file
    /// another process took meanwhile, given up.
    public static func retakeAfterSuspension() async {
        await FileLockRegistry.current.retakeAll()
    }
}
