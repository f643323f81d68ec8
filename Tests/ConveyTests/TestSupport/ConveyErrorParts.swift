import Foundation
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The values of a `ConveyError` case, by name, for assertions: `nil` for any other case.
extension ConveyError {
    var transportFailure: (kind: TransportFailure, url: URL?, code: Int, reason: String)? {
        if case .transport(let kind, let url, let code, let reason) = self { return (kind, url, code, reason) }
        return nil
    }

    /// Either timeout: `isTotal` for the total one.
    var timeout: (limit: Duration, url: URL?, isTotal: Bool)? {
        switch self {
        case .attemptTimedOut(let limit, let url): (limit, url, false)
        case .totalTimedOut(let limit, let url): (limit, url, true)
        default: nil
        }
    }

    var sizeLimit: (limit: Int64, url: URL?, isHead: Bool)? {
        if case .responseTooLarge(let limit, let url, let isHead) = self { return (limit, url, isHead) }
        return nil
    }

    var decodingFailure: (typeName: String, codingPath: String, reason: String, bodyPrefix: String, url: URL?)? {
        if case .decodingFailed(let typeName, let codingPath, let reason, let bodyPrefix, let url) = self {
            return (typeName, codingPath, reason, bodyPrefix, url)
        }
        return nil
    }

    var encodingFailure: (subject: String, reason: String)? {
        if case .encodingFailed(let subject, let reason) = self { return (subject, reason) }
        return nil
    }

    var downloadFailure: (destination: URL, reason: String)? {
        if case .downloadFailed(let destination, let reason) = self { return (destination, reason) }
        return nil
    }

    var headerFieldFailure: (name: String, source: String, reason: String)? {
        if case .invalidHeaderField(let name, let source, let reason) = self { return (name, source, reason) }
        return nil
    }

    /// Either cache failure: `notCached`, or the folder (`url`) was unavailable.
    var cacheFailure: (notCached: Bool, url: URL?, reason: String)? {
        switch self {
        case .notCached(let url, let reason): (true, url, reason)
        case .cacheFolderUnavailable(let folder, let reason): (false, folder, reason)
        default: nil
        }
    }
}
