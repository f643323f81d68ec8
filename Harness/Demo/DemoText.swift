@_spi(Transport) @_spi(Tools) import Convey

/// Short descriptions of errors for demo output.
enum DemoText {
    /// `ConveyError.timedOut`, `HTTPError 404`, or the type name.
    static func errorName(_ error: any Error) -> String {
        if let http = error as? HTTPError { return "HTTPError \(http.statusCode)" }
        guard let convey = error as? ConveyError else { return String(describing: type(of: error)) }
        let name = switch convey {
        case .invalidURL: "invalidURL"
        case .noRemote: "noRemote"
        case .serverDisabled: "serverDisabled"
        case .requestsDisabledForDebugging: "requestsDisabledForDebugging"
        case .transport: "transport"
        case .attemptTimedOut: "attemptTimedOut"
        case .totalTimedOut: "totalTimedOut"
        case .cancelled: "cancelled"
        case .encodingFailed: "encodingFailed"
        case .invalidHeaderField: "invalidHeaderField"
        case .decodingFailed: "decodingFailed"
        case .notCached: "notCached"
        case .cacheFolderUnavailable: "cacheFolderUnavailable"
        case .responseTooLarge: "responseTooLarge"
        case .downloadFailed: "downloadFailed"
        case .noRecordedAnswer: "noRecordedAnswer"
        case .harFileUnusable: "harFileUnusable"
        case .credentialRefused: "credentialRefused"
        case .outboxLimitReached: "outboxLimitReached"
        case .attemptsExhausted: "attemptsExhausted"
        case .expired: "expired"
        case .notDelivered: "notDelivered"
        case .outboxStorageFailed: "outboxStorageFailed"
        case .outboxFolderInUse: "outboxFolderInUse"
        case .unknownOutboxItem: "unknownOutboxItem"
        }
        return "ConveyError." + name
    }

    /// The name and the log detail.
    static func error(_ error: any Error) -> String {
        // A ConveyError's or HTTPError's description is its log detail.
        errorName(error) + ": " + String(describing: error)
    }
}
