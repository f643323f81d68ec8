import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One entry of a HAR file, ready to answer a request: what it matches and what it answers with.
struct HARFixture: Sendable {
    /// What an entry answers with: a response, or the failure an exchange without one ended in.
    enum Answer: Sendable {
        /// A response; `failure`, when the exchange broke after it began (a body cut short), is
        /// thrown once the body is delivered.
        case response(ResponseHead, body: Data, failure: (kind: String, message: String)?)
        /// `kind` is a `TransportFailure` raw value, or `timedOut`.
        case failure(kind: String, message: String)
    }

    /// The entry's place in `log.entries`, from 0.
    let position: Int
    /// `METHOD URL` as the file writes it, for messages.
    let name: String
    let key: HARRequestKey
    /// The request body, for telling apart entries that share method and URL.
    let body: Data?
    let answer: Answer

    /// The entry's answer to `request`, as a transport would have given it: the head, and the body
    /// in memory, or, when the entry records a failure after its body began, the body followed by
    /// that failure. An entry that records a failure without a response throws it. Failures are
    /// Convey's errors, a timeout naming the run's idle `timeout`.
    func answer(to request: OutgoingRequest, timeout: Duration) throws -> Exchange {
        let url = request.url
        switch answer {
        case .response(var head, let body, let failure):
            head.url = url
            guard let failure else { return Exchange(request: request, head: head, body: .data(body)) }
            let error = TransportErrors.map(Self.error(kind: failure.kind, message: failure.message, url: url), url: url, timeout: timeout)
            return Exchange(request: request, head: head, body: .stream(BrokenBody(body, then: error, url: url)))
        case .failure(let kind, let message):
            throw TransportErrors.map(Self.error(kind: kind, message: message, url: url), url: url, timeout: timeout)
        }
    }

    /// The error a recorded failure replays as: a timeout, or a transport failure of its kind.
    private static func error(kind: String, message: String, url: URL) -> any Error {
        let reason = "replayed from a HAR entry: \(message)"
        if kind == "timedOut" { return URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]) }
        let failureKind = TransportFailure(rawValue: kind) ?? .connectionLost
        return ConveyError.transport(failureKind, url: url, code: URLError.Code.networkConnectionLost.rawValue, reason: reason)
    }

    /// HTTP versions as HAR writers spell them (`http/2.0`, `h2`, `HTTP/1.1`) in Convey's spelling.
    static func httpVersion(_ text: String?) -> String {
        switch text?.lowercased() ?? "" {
        case "": "HTTP/1.1"
        case "h2", "http/2", "http/2.0": "HTTP/2"
        case "h3", "http/3", "http/3.0": "HTTP/3"
        case let other: other.uppercased()
        }
    }
}

/// A recorded body that broke off: its bytes, then the failure the entry records.
private final class BrokenBody: BodySource {
    private let state: InlineLocked<(body: Data?, error: (any Error)?)>
    let url: URL?

    init(_ body: Data, then error: any Error, url: URL) {
        state = InlineLocked((body.isEmpty ? nil : body, error))
        self.url = url
    }

    func next() async throws -> Data? {
        let (body, error) = state.withLock { state in
            defer { state = state.body == nil ? (nil, nil) : (nil, state.error) }
            return state
        }
        if let body { return body }
        if let error { throw error }
        return nil
    }

    func close() { state.set((nil, nil)) }

    func cancel() { state.set((nil, ConveyError.cancelled)) }
}
