extension ConveyError {
    /// The case's name (`attemptTimedOut`, `cancelled`, ...): what a span's `error.type` carries
    /// and Convey's tools print.
    @_spi(Tools) public var caseName: String {
        switch self {
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
        case .webSocket: "webSocket"
        }
    }
}
