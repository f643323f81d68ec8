import Foundation

/// One attempt of an outbox item, run as an ordinary task through the pipeline, so that the
/// server's `headers(for:)`, its credential refresh after a 401 (one refresh, one retry), hooks,
/// redirects, status rules, echo and recording apply to it as to any run.
///
/// Each run is one attempt: retries across attempts and restarts are the outbox's, so the task
/// asks for none, and the server's `didFinish(task:response:error:)` is called by the outbox
/// once per item (`OwnedAttemptTask`). The server's `headers(for:)` sees this task: its
/// `path` and `method` are the enqueued task's.
struct OutboxDeliveryTask: OwnedAttemptTask {
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
    var absoluteURL: URL { stored.url }
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

    var attemptLabel: OutboxAttemptLabel {
        OutboxAttemptLabel(id: itemID, key: stored.idempotencyKey, keyField: idempotencyKeyField, attempt: itemAttempt, taskName: stored.taskName)
    }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        sentSecrets.add(OutboxCredentials.secretValues(of: Array(request.fields), redaction: server.configuration.redaction))
        return request
    }

    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { nil }
}

/// What echo and recording say about an outbox attempt.
struct OutboxAttemptLabel: Sendable {
    let id: String
    let key: String
    let keyField: String
    let attempt: Int
    /// The enqueued task's type name, which records carry instead of the delivery task's.
    let taskName: String
}

/// The credential values an attempt sent, filled in as it is sent.
final class SentSecrets: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String] = []

    func add(_ more: [String]) { lock.withLock { values += more } }

    var all: [String] { lock.withLock { values.sorted { $0.utf8.count > $1.utf8.count } } }
}
