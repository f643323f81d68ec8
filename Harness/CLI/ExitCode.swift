@_spi(Transport) @_spi(Tools) import Convey

/// What the harness exits with, so that scripts can tell outcomes apart.
enum ExitCode: Int32, Sendable {
    /// The command worked; for a request, a response with a status below 400 arrived.
    case ok = 0
    /// The command line was wrong: unknown command or option, missing or bad value.
    case usage = 1
    /// The server answered with a 4xx status.
    case clientError = 2
    /// The server answered with a 5xx status.
    case serverError = 3
    /// No response: transport failure, timeout, `-fail-all-requests`.
    case noResponse = 4
    /// Something failed locally: a file could not be read, a record does not exist or cannot be
    /// replayed, a demo step did not behave as expected.
    case localFailure = 5
    /// `-f`/`--fail`: the server answered with a status of 400 or more (curl's code).
    case httpErrorWithFail = 22
    /// `-C`: the server sent the whole body instead of the range asked for (curl's code).
    case rangeNotSupported = 33
    /// Interrupted (Ctrl-C) or cancelled.
    case interrupted = 130

    /// The exit code for a response status.
    init(status: Int) {
        switch status {
        case 400..<500: self = .clientError
        case 500...: self = .serverError
        default: self = .ok
        }
    }

    /// One line per code, for help text and docs.
    static let table = """
        Exit codes:
          0    ok (a response with a status below 400)
          1    usage error (unknown command or option, bad value)
          2    the server answered 4xx
          3    the server answered 5xx
          4    no response (transport failure, timeout, -fail-all-requests)
          5    local failure (unreadable file, missing record, request cannot be replayed, demo step misbehaved)
          22   with -f/--fail: the server answered 400 or more (as curl)
          33   with -C: the server does not resume, it sent the whole body (as curl)
          130  interrupted (Ctrl-C) or cancelled
        """
}

extension ExitCode {
    /// The exit code for a failed run.
    init(error: any Error) {
        if error.isCancellation {
            self = .interrupted
        } else if error is ResumeRefused {
            self = .rangeNotSupported
        } else if let http = error as? HTTPError {
            self.init(status: http.statusCode)
        } else if let convey = error as? ConveyError {
            switch convey {
            case .transport, .attemptTimedOut, .totalTimedOut, .requestsDisabledForDebugging, .serverDisabled, .noRemote,
                 .notCached, .cacheFolderUnavailable: self = .noResponse
            case .invalidURL: self = .usage
            case .cancelled: self = .interrupted
            case .encodingFailed, .invalidHeaderField, .decodingFailed: self = .localFailure
            case .responseTooLarge: self = .noResponse
            case .downloadFailed, .noRecordedAnswer, .harFileUnusable, .credentialRefused, .outboxLimitReached,
                 .outboxStorageFailed, .outboxFolderInUse, .unknownOutboxItem: self = .localFailure
            case .attemptsExhausted, .expired, .notDelivered: self = .noResponse
            case .webSocket(.notARequest, _, _, _), .webSocket(.invalidArgument, _, _, _): self = .localFailure
            case .webSocket: self = .noResponse
            }
        } else {
            self = .localFailure
        }
    }
}
