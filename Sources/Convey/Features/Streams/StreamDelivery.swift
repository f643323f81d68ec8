import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams: the body comes up the chain as chunks that the caller pulls, through a bounded buffer.
///
/// The run returns once the head arrives and its attempt is checked, so the run's hooks, status
/// check and retries all happen before the caller gets the stream. For a status the run's
/// `StatusCheck` makes an `HTTPError`, the start of the body is read for the error and the
/// transfer ends. A `requiredMediaType` (an event stream's) is checked as the attempt's part, so a
/// mismatch fails the run like any other failure, before any success is reported. Streams bypass
/// the cache.
struct StreamDelivery: ResponseDelivery {
    /// The run's total timeout in place of the task's, carried past the head over the whole body:
    /// the stream ends with `ConveyError.totalTimedOut` when it passes.
    let totalTimeout: Duration?
    /// How many body bytes may wait for the reader.
    let bufferSize: Int
    /// Header fields set on each attempt unless the task set them itself.
    var defaultHeaders: [String: String] = [:]
    /// Header fields set on each attempt, replacing the task's.
    var headers: [String: String] = [:]
    /// The media type the response must have, unless it is `204 No Content`: what `events()` reads.
    var requiredMediaType: String?

    init(totalTimeout: Duration?, bufferSize: Int) {
        self.totalTimeout = totalTimeout
        self.bufferSize = bufferSize
    }

    @ConveyActor
    func prepare(_ request: inout OutgoingRequest) throws -> (any AttemptHold)? {
        for (name, value) in defaultHeaders where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return nil
    }

    /// Checks the media type an event stream needs; the body goes up as it is.
    func stage(_ exchange: inout Exchange, holding hold: (any AttemptHold)?, plan: RunPlan) async throws {
        try checkMediaType(of: exchange.head)
    }

    private func checkMediaType(of head: ResponseHead) throws {
        guard let requiredMediaType, head.statusCode != 204 else { return }
        let contentType = head.value(forHTTPHeaderField: "Content-Type")
        let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == requiredMediaType else {
            throw ConveyError.decodingFailed(
                typeName: "ServerSentEvent", codingPath: "",
                reason: "the response's Content-Type is \(contentType.map { "\"\($0)\"" } ?? "missing"), not \(requiredMediaType)",
                bodyPrefix: "", url: head.url)
        }
    }

    /// The stream of the run's body, read from memory as from the network. Only a total timeout
    /// the stream asked for covers its body; the task's covers the head.
    func payload(_ exchange: Exchange, staged: Void?, holding hold: (any AttemptHold)?, plan: RunPlan,
                 deadline: RunDeadline?) async throws -> ResponseStream<Data> {
        // The head the run ends with, which a step around the run may have changed.
        do {
            try checkMediaType(of: exchange.head)
        } catch {
            exchange.body.close()
            throw error
        }
        guard totalTimeout != nil, let deadline else { return ResponseStream(exchange.body, url: exchange.head.url) }
        return ResponseStream(DeadlineBody(exchange.body.source(url: exchange.head.url), deadline: deadline))
    }
}
