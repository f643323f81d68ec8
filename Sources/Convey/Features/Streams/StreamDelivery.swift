import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams: the body goes to the caller as it arrives, through a bounded buffer.
///
/// `exchange` starts the transfer in a task of its own (the run's machine holds it, and a stop
/// ends it) and returns once the head arrives, so the run's hooks, status check and retries all
/// happen before the caller gets the stream. For a status the run's `StatusCheck` makes an
/// `HTTPError`, up to `errorBodyLimit` bytes of the body are read for the error and the transfer
/// ends. A `requiredMediaType` (an event stream's) is checked as the payload step, so a mismatch
/// fails the run like any other failure, before any success is reported. Streams bypass the cache.
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

    /// How much of an error response's body is kept for its `HTTPError`.
    static var errorBodyLimit: Int { 64 * 1024 }

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

    func exchange(_ hop: Hop, through chain: ExchangeChain, attempt: AttemptContext,
                  holding hold: (any AttemptHold)?) async throws -> (Exchange, (any AttemptHold)?) {
        // The transfer runs in a task of its own, which the run's stop ends through the transfer.
        var streaming = attempt
        streaming.expectsLargeBody = true
        streaming.cancellation = .none
        let hops = HopObserver()
        streaming.hopObserver = hops
        let transfer = StreamTransfer(url: hop.request.url, timeout: attempt.plan.idleTimeout, capacity: bufferSize) { [streaming] sink in
            try await chain.send(hop, into: sink, attempt: streaming).metrics
        }
        guard attempt.cancellation.register(transfer) else {
            transfer.close()
            throw CancellationError()
        }
        let head: ResponseHead
        do {
            head = try await transfer.head()
        } catch {
            transfer.close()
            throw error
        }
        var errorBody = Data()
        // A status the run will throw for.
        if attempt.plan.status.throwsError(forStatus: head.statusCode) {
            // What the error needs of the body; the rest is never read. A body that breaks off
            // still leaves the status to report.
            while errorBody.count < Self.errorBodyLimit, let chunk = try? await transfer.next() {
                errorBody.append(chunk)
            }
            transfer.close()
            errorBody = errorBody.prefix(Self.errorBodyLimit)
        }
        return (Exchange(request: hops.request ?? hop.request, head: head, body: errorBody), transfer)
    }

    /// A stream of the answer's body, read from memory as from the network.
    func payload(answering exchange: Exchange, plan: RunPlan, deadline: RunDeadline?) async throws -> ResponseStream<Data> {
        let answer = TransportResponse(head: exchange.head, data: exchange.body, metrics: exchange.metrics)
        let transfer = StreamTransfer(url: exchange.request.url, timeout: plan.idleTimeout, capacity: bufferSize) { sink in
            try await sink.deliver(answer)
            return answer.metrics
        }
        do {
            return try await payload(from: exchange, holding: transfer, plan: plan, deadline: deadline)
        } catch {
            transfer.close()
            throw error
        }
    }

    func payload(from exchange: Exchange, holding hold: (any AttemptHold)?, plan: RunPlan, deadline: RunDeadline?) async throws -> ResponseStream<Data> {
        if let requiredMediaType, exchange.head.statusCode != 204 {
            let contentType = exchange.head.value(forHTTPHeaderField: "Content-Type")
            let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard mediaType == requiredMediaType else {
                throw ConveyError.decodingFailed(
                    typeName: "ServerSentEvent", codingPath: "",
                    reason: "the response's Content-Type is \(contentType.map { "\"\($0)\"" } ?? "missing"), not \(requiredMediaType)",
                    bodyPrefix: "", url: exchange.head.url)
            }
        }
        guard let transfer = hold as? StreamTransfer else { throw ConveyError.cancelled }
        // Only a total timeout the stream asked for covers its body; the task's covers the head.
        if totalTimeout != nil, let deadline { transfer.keep(deadline) }
        return ResponseStream(transfer)
    }
}
