import Foundation

/// Sends spans to an OpenTelemetry collector in OTLP/HTTP with the JSON encoding (OTLP 1.x:
/// `POST /v1/traces`, `Content-Type: application/json`), in batches, from a task of its own.
///
/// ```swift
/// let exporter = OTLPExporter(collector: URL(string: "http://127.0.0.1:4318")!)
/// configuration.tracing = TracingConfiguration(exporter: exporter)
/// …
/// await exporter.shutdown()   // before the process exits: sends what is queued
/// ```
///
/// What it promises:
/// - **A run never waits for it and never fails because of it.** `export` puts spans in a
///   bounded queue and returns; a full queue drops spans and counts them (`droppedSpans`).
/// - **Batches** of at most `maximumBatchSize` spans go out when that many are queued, and at
///   least every `batchInterval` while any are.
/// - **Retries as the OTLP specification says**: after 429, 502, 503 and 504 (waiting the
///   collector's `Retry-After`, at most a minute) and after network failures, with exponential
///   backoff from 1 second; a batch still failing after 5 tries, or refused with another status,
///   is dropped and counted. While a batch waits, new spans fill the queue and then drop: memory
///   stays flat however long the collector is down.
/// - **Its own requests are never traced**: they go through a server of the exporter's own,
///   without tracing.
/// - **`flush()`** sends what is queued now and returns when it is delivered or dropped;
///   **`shutdown()`** does the same with one try per batch, then stops: later spans are dropped.
public final class OTLPExporter: SpanExporter {
    private let batcher: OTLPBatcher

    /// An exporter to the collector at `collector`, a base URL such as `http://127.0.0.1:4318`
    /// (spans go to its `/v1/traces`; a URL ending with `/v1/traces` is used as it is).
    ///
    /// - Parameters:
    ///   - collector: the collector's base URL (`http://127.0.0.1:4318`), or its full `/v1/traces` URL.
    ///   - headers: fields sent with every export (a collector's API key), never with the app's requests.
    ///   - serviceName: the `service.name` of the spans' resource. Default: the process's name.
    ///   - maximumQueueSize: the most spans waiting to go out; more are dropped. Default: 2048.
    ///   - maximumBatchSize: the most spans in one request. Default: 512.
    ///   - batchInterval: how long a span waits at most for its batch to fill. Default: 5 seconds.
    ///   - timeout: how long one export request may take. Default: 10 seconds.
    public convenience init(collector: URL, headers: Headers = [], serviceName: String = ProcessInfo.processInfo.processName,
                            maximumQueueSize: Int = 2048, maximumBatchSize: Int = 512, batchInterval: Duration = .seconds(5),
                            timeout: Duration = .seconds(10)) {
        self.init(collector: collector, headers: headers, serviceName: serviceName, maximumQueueSize: maximumQueueSize,
                  maximumBatchSize: maximumBatchSize, batchInterval: batchInterval, timeout: timeout,
                  retryWait: { try await Task.sleep(for: $0) })
    }

    /// An exporter that waits between tries with `retryWait` (tests record the waits).
    init(collector: URL, headers: Headers, serviceName: String, maximumQueueSize: Int, maximumBatchSize: Int,
         batchInterval: Duration, timeout: Duration, retryWait: @escaping @Sendable (Duration) async throws -> Void) {
        let sender = OTLPSender(collector: collector, headers: headers, timeout: timeout)
        batcher = OTLPBatcher(sender: sender, serviceName: serviceName, queueLimit: max(1, maximumQueueSize),
                              batchSize: max(1, min(maximumBatchSize, maximumQueueSize)), interval: batchInterval, retryWait: retryWait)
    }

    deinit {
        batcher.stop()
    }

    /// Queues `spans` for the collector and returns at once; what does not fit is dropped and counted.
    public func export(_ spans: [TraceSpan]) {
        batcher.enqueue(spans)
    }

    /// Sends every span queued so far, and returns once each is delivered or dropped.
    public func flush() async {
        await batcher.flush(tryingOnce: false)
    }

    /// Sends every span queued so far, one try per batch, then stops: spans exported afterwards are dropped.
    public func shutdown() async {
        await batcher.flush(tryingOnce: true)
        batcher.stop()
    }

    /// How many spans were dropped: a full queue, a batch refused or still failing after its retries, or after `shutdown()`.
    public var droppedSpans: Int { batcher.counts.dropped }
    /// How many spans the collector accepted.
    public var deliveredSpans: Int { batcher.counts.delivered }
    /// How many spans wait to go out (at most `maximumQueueSize`, besides the batch being sent).
    public var queuedSpans: Int { batcher.counts.queued }
    /// Where the spans go: the collector's `/v1/traces`.
    public var endpoint: URL { batcher.sender.endpoint }
}
