/// Convey's file locks around the app's suspension.
///
/// iOS ends an app that is suspended while it holds a lock on a file in a shared container, such
/// as an App Group folder an app and its extension share (termination reason `0xdead10cc`). Two
/// of Convey's files are locked for long: an outbox's folder (`.lock`, held while it delivers)
/// and a download's partial file (held for each attempt). Releasing them lets the app be
/// suspended safely; retaking them lets it go on afterwards.
///
/// In an app on iOS, tvOS and visionOS this happens by itself: the locks are released when the
/// app enters the background and retaken when it returns to the foreground. App extensions (which
/// get no such notifications) and apps on other platforms call these methods themselves, for
/// example from their own lifecycle handlers. See Docs/outbox.md and Docs/downloads.md.
///
/// While released, an outbox delivers nothing (its attempts in flight are stopped and their
/// items stay pending, to be sent again with the same key) and waits to retake its folder, for
/// as long as another process holds it; a download's writes go on, and one that another process
/// took the partial file from meanwhile fails with `ConveyError.downloadFailed` when it is retaken.
public enum FileLocks {
    /// Lets go of every file lock Convey holds in this process; returns once they are let go of.
    public static func releaseForSuspension() async {
        await FileLockRegistry.shared.releaseAll()
    }

    /// Takes the locks again; returns once each is taken or, for a download whose partial file
    /// another process took meanwhile, given up.
    public static func retakeAfterSuspension() async {
        await FileLockRegistry.shared.retakeAll()
    }
}
