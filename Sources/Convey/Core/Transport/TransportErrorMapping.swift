import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Maps what a transport throws onto Convey's errors: cancellation and timeouts to their own
/// cases, every other `URLError` to a `ConveyError.transport` of the kind its code stands for.
///
/// Transports report faults as `URLError`s with the code URLSession uses for them (see
/// `CurlErrors`, `URLSessionErrors`), or as `ConveyError`s, which pass through unchanged (a HAR
/// fixture transport's `noRecordedAnswer` among them). Applied where a transport's error arises
/// (the transport's step, a stream's transfer), so what a step throws never passes through it; a
/// defect in Convey comes out as it is (`ConveyDefect`), never as a transport failure.
enum TransportErrors {
    static func map(_ error: any Error, url: URL?, timeout: Duration) -> any Error {
        if error is any ConveyDefect { return error }
        if error is ConveyError || error is HTTPError { return error }
        if error is CancellationError { return ConveyError.cancelled }
        guard let urlError = error as? URLError else {
            return ConveyError.transport(.other, url: url, code: -1, reason: String(describing: error))
        }
        switch urlError.code {
        case .cancelled: return ConveyError.cancelled
        case .timedOut: return ConveyError.attemptTimedOut(limit: timeout, url: url)
        default:
            return ConveyError.transport(urlErrorCode: urlError.code.rawValue, reason: urlError.localizedDescription,
                                         url: urlError.failingURL ?? url)
        }
    }
}
