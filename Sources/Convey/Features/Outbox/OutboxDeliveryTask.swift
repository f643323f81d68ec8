import Foundation

/// One attempt of an outbox item, run as an ordinary task through the pipeline, so that the
/// server's `headers(for:)`, its credential refresh after a 401 (one refresh, one retry), hooks,
/// redirects, status rules, echo and recording apply to it as to any run.
///
/// Each run is one attempt: retries across attempts and restarts are the outbox's, so the task
/// asks for none. It is started (`deliver()`) to the URL stored at enqueue time, whatever the
/// server's remote is now, under the item's label in echo, records and spans (`RunLabel`), and
/// without the server's `didFinish(task:response:error:)`, which the outbox calls once per item.
/// The server's `headers(for:)` sees this task: its `path` and `method` are the enqueued task's.
struct OutboxDeliveryTask: DownloadingTask {
    typealias DownloadPayload = Data

    let server: ConveyServer
    let itemID: String
    let stored: StoredRequest
    let body: Data
    /// The item's attempt this run is, from 1, counted across processes.
    let itemAttempt: Int
    let maximumResponseSize: Int64
    let idempotencyKeyField: String
    /// The credential values the attempt sent, so that a body echoing them is masked before it is kept.
    let sentSecrets = SentSecrets()

    var path: String { stored.path }
    var method: HTTPMethod { HTTPMethod(rawValue: stored.method) }
    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(contentsOf: stored.fields)
            headers[idempotencyKeyField] = stored.idempotencyKey
            return headers
        }
    }
    var requestBody: RequestBody? {
        get async throws {
            guard !body.isEmpty || stored.contentType != nil else { return nil }
            return RequestBody(data: body, contentType: stored.contentType, contentEncoding: stored.contentEncoding)
        }
    }
    // An item must reach the server: never answered from a cache, never joined to another request.
    var cacheStrategy: CacheStrategy { .never }
    var configuration: TaskConfiguration? { TaskConfiguration(maximumResponseSize: maximumResponseSize, coalescesRequests: false) }
    var statusRule: StatusRule { .standard }

    /// Runs the attempt: one run of this task, to the stored URL, under the item's label, its
    /// outcome left to the outbox to report.
    nonisolated func deliver() async throws -> ServerResponse<Data> {
        var start = RunStart()
        start.url = stored.url
        start.reportsToServer = false
        start.values[RunLabel.self] = RunLabel(
            taskName: stored.taskName, note: "outbox item \(itemID) attempt \(itemAttempt), \(idempotencyKeyField) \(stored.idempotencyKey)",
            item: itemID)
        return try await TaskRunner(task: self, start: start).run()
    }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        sentSecrets.add(OutboxCredentials.secretValues(of: Array(request.fields), redaction: server.storedConfiguration.redaction))
        return request
    }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { nil }
}

/// The credential values an attempt sent, filled in as it is sent.
final class SentSecrets: Sendable {
    private let values = InlineLocked<[String]>([])

    func add(_ more: [String]) { values.withLock { $0 += more } }

    var all: [String] { values.value.sorted { $0.utf8.count > $1.utf8.count } }
}
