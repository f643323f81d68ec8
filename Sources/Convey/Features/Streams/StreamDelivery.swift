import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams: the body goes to the caller as it arrives, through a bounded buffer.
///
/// `exchange` starts the transfer in a task of its own and returns once the head arrives, so
/// the run's hooks, status check and retries all happen before the caller gets the stream. For a
/// status the run's `StatusCheck` makes an `HTTPError`, up to `errorBodyLimit` bytes of the body
/// are read for the error and the transfer ends. A `requiredMediaType` (an event stream's) is
/// checked as the payload step, so a mismatch fails the run like any other failure, before any
/// success is reported. Streams bypass the cache.
@ConveyActor
struct StreamDelivery<T: DownloadingTask>: ResponseDelivery {
    let task: T
    /// The run's total timeout in place of the task's, carried past the head over the whole body:
    /// the stream ends with `ConveyError.timedOut` of kind `.total` when it passes.
    let totalTimeout: Duration?
    /// How many body bytes may wait for the reader.
    let bufferSize: Int
    /// Header fields set on each attempt unless the task set them itself.
    var defaultHeaders: [String: String] = [:]
    /// Header fields set on each attempt, replacing the task's.
    var headers: [String: String] = [:]
    /// The media type the response must have, unless it is `204 No Content`: what `events()` reads.
    var requiredMediaType: String?
    /// The current attempt's transfer, until the run hands it to the caller or lets it go.
    private let current = CurrentTransfer()

    /// How much of an error response's body is kept for its `HTTPError`.
    static var errorBodyLimit: Int { 64 * 1024 }

    init(task: T, totalTimeout: Duration?, bufferSize: Int) {
        self.task = task
        self.totalTimeout = totalTimeout
        self.bufferSize = bufferSize
    }

    func prepare(_ request: inout OutgoingRequest) {
        for (name, value) in defaultHeaders where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    }

    func exchange(_ request: OutgoingRequest, status: StatusCheck, send: @escaping DeliverySend) async throws -> DeliveredExchange {
        let server = task.server
        var options = SendOptions(expectsLargeBody: true)
        current.sentRequest = request
        options.sendingHop = { [current] hop in current.sentRequest = hop }
        let transfer = StreamTransfer(url: request.url, timeout: RequestBuilder.timeout(for: task, server: server),
                                      capacity: bufferSize) { [options] sink in
            try await send(request, sink, options).metrics
        }
        current.transfer = transfer
        let head = try await transfer.head()
        var errorBody = Data()
        // A status the run will throw for.
        if status.throwsError(forStatus: head.statusCode) {
            // What the error needs of the body; the rest is never read. A body that breaks off
            // still leaves the status to report.
            while errorBody.count < Self.errorBodyLimit, let chunk = try? await transfer.next() {
                errorBody.append(chunk)
            }
            transfer.close()
            errorBody = errorBody.prefix(Self.errorBodyLimit)
        }
        return DeliveredExchange(request: current.sentRequest ?? request, head: head, data: errorBody, metrics: ExchangeMetrics())
    }

    func payload(from response: ServerResponse<Data>, url: URL?, deadline: RunDeadline?) async throws -> ResponseStream {
        if let requiredMediaType, response.statusCode != 204 {
            let contentType = response.header("Content-Type")
            let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            guard mediaType == requiredMediaType else {
                throw ConveyError.decodingFailed(DecodingFailure(
                    typeName: "ServerSentEvent", codingPath: "",
                    reason: "the response's Content-Type is \(contentType.map { "\"\($0)\"" } ?? "missing"), not \(requiredMediaType)",
                    bodyPrefix: "", url: response.head.url))
            }
        }
        guard let transfer = current.transfer else { throw ConveyError.cancelled }
        current.transfer = nil
        // Only a total timeout the stream asked for covers its body; the task's covers the head.
        if totalTimeout != nil, let deadline { transfer.keep(deadline) }
        return ResponseStream(transfer)
    }

    func abandon() {
        current.transfer?.close()
        current.transfer = nil
    }
}

/// The transfer an attempt of a stream has open: a reference, since deliveries are values.
@ConveyActor
private final class CurrentTransfer {
    var transfer: StreamTransfer?
    /// The request of the hop the transfer is on (the last of a redirect chain once the head arrived).
    var sentRequest: OutgoingRequest?
}
