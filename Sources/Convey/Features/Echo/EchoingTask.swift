/// Marks a task whose every run is echoed in full and recorded: `[.consoleFull, .recorded]`.
public protocol EchoingTask: DownloadingTask {}

extension EchoingTask {
    public var echoStyle: TaskEchoStyle { [.consoleFull, .recorded] }
}

/// Marks a task that is never echoed or recorded, for sensitive calls.
public protocol NonEchoingTask: DownloadingTask {}

extension NonEchoingTask {
    public var echoStyle: TaskEchoStyle { .none }
}
