import Foundation

/// Sends spans and metrics to an OpenTelemetry collector in OTLP/HTTP with the JSON encoding
/// (OTLP 1.x: `POST /v1/traces` and `POST /v1/metrics`, `Content-Type: application/json`), from
/// tasks of its own. One exporter serves both signals: give it to `TracingConfiguration` and to
/// `MetricsConfiguration`.
///
/// ```swift
/// let exporter = OTLPExporter(collector: URL(string: "http://127.0.0.1:4318")!)
/// configuration.tracing = TracingConfiguration(exporter: exporter)
/// configuration.metrics = MetricsConfiguration(exporter: exporter)
/// …
/// await exporter.shutdown()   // before the process exits: sends what is queued, within `exportTimeout`
/// ```
///
/// What it promises:
/// - **A run never waits for it and never fails because of it.** `export` puts spans in a
///   bounded queue and returns; a full queue drops spans and counts them (`droppedSpans`).
///   `record` adds a measurement to its series under one lock.
/// - **Batches** of at most `maximumBatchSize` spans go out when that many are queued, and at
///   least every `batchInterval` while any are. **Metrics** go out every `metricsInterval`, as
///   `temporality` says, each instrument with at most `cardinalityLimit` attribute sets (the
///   rest counted in the overflow set, `otel.metric.overflow=true`).
/// - **Retries as the OTLP specification says**: after 429, 502, 503 and 504 (waiting the
///   collector's `Retry-After`, at most a minute) and after network failures, with exponential
///   backoff from 1 second; a batch still failing after 5 tries, or refused with another status,
///   is dropped and counted. While a batch waits, new spans fill the queue and then drop: memory
///   stays flat however long the collector is down.
/// - **Its own requests are never traced or measured**: they go through servers of the
///   exporter's own, without tracing or metrics.
/// - **`flush()`** sends what is queued and measured now and returns when it is delivered or
///   dropped; **`shutdown()`** does the same with one try per batch, then stops: later spans
///   and measurements are dropped. Both return within `exportTimeout` whatever the collector does.
public final class OTLPExporter: SpanExporter, MetricsExporter {
    private let batcher: OTLPBatcher
    /// The metrics side: the aggregator runs record into, and its export.
    let metrics: OTLPMetricsExport
    /// How long `flush()` and `shutdown()` take at most.
    let exportTimeout: Duration

    /// An exporter to the collector at `collector`, a base URL such as `http://127.0.0.1:4318`
    /// (spans go to its `/v1/traces`, metrics to its `/v1/metrics`; a URL ending with either is
    /// taken as the collector's with that path).
    ///
    /// - Parameters:
    ///   - collector: the collector's base URL (`http://127.0.0.1:4318`), or its full `/v1/traces` URL.
    ///   - headers: fields sent with every export (a collector's API key), never with the app's requests.
    ///   - serviceName: the `service.name` of the spans' and metrics' resource. Default: the process's name.
    ///   - maximumQueueSize: the most spans waiting to go out; more are dropped. Default: 2048.
    ///   - maximumBatchSize: the most spans in one request. Default: 512.
    ///   - batchInterval: how long a span waits at most for its batch to fill. Default: 5 seconds.
    ///   - timeout: how long one export request may take. Default: 10 seconds.
    ///   - exportTimeout: how long `flush()` and `shutdown()` take at most, whatever is queued and
    ///     whatever the collector does (OpenTelemetry's export timeout). Default: 30 seconds.
    ///   - metricsInterval: how often metrics are sent. Default: 60 seconds, OpenTelemetry's.
    ///   - temporality: whether counters and histograms are sent as totals since the exporter
    ///     began (`.cumulative`, the default) or as what happened since the previous export (`.delta`).
    ///   - cardinalityLimit: the most attribute sets of one instrument, the overflow set
    ///     included; measurements of a set beyond them go to the overflow set. Default: 2000, the
    ///     specification's.
    public convenience init(collector: URL, headers: Headers = [], serviceName: String = ProcessInfo.processInfo.processName,
                            maximumQueueSize: Int = 2048, maximumBatchSize: Int = 512, batchInterval: Duration = .seconds(5),
                            timeout: Duration = .seconds(10), exportTimeout: Duration = .seconds(30),
                            metricsInterval: Duration = .seconds(60), temporality: Temporality = .cumulative,
                            cardinalityLimit: Int = 2000) {
        self.init(collector: collector, headers: headers, serviceName: serviceName, maximumQueueSize: maximumQueueSize,
                  maximumBatchSize: maximumBatchSize, batchInterval: batchInterval, timeout: timeout, exportTimeout: exportTimeout,
                  metricsInterval: metricsInterval, temporality: temporality, cardinalityLimit: cardinalityLimit,
                  retryWait: { try await Task.sleep(for: $0) })
    }

    /// An exporter that waits between tries with `retryWait` (tests record the waits).
    init(collector: URL, headers: Headers, serviceName: String, maximumQueueSize: Int, maximumBatchSize: Int,
         batchInterval: Duration, timeout: Duration, exportTimeout: Duration = .seconds(30), metricsInterval: Duration = .seconds(60),
         temporality: Temporality = .cumulative, cardinalityLimit: Int = MetricAggregator.defaultCardinalityLimit,
         retryWait: @escaping @Sendable (Duration) async throws -> Void) {
        let traces = OTLPSender(endpoint: OTLPSender.endpoint(collector: collector, signal: "traces"), headers: headers, timeout: timeout)
        batcher = OTLPBatcher(delivery: OTLPDelivery(sender: traces, retryWait: retryWait), serviceName: serviceName,
                              queueLimit: max(1, maximumQueueSize), batchSize: max(1, min(maximumBatchSize, maximumQueueSize)),
                              interval: batchInterval)
        let metricsSender = OTLPSender(endpoint: OTLPSender.endpoint(collector: collector, signal: "metrics"), headers: headers, timeout: timeout)
        metrics = OTLPMetricsExport(aggregator: MetricAggregator(temporality: temporality, cardinalityLimit: cardinalityLimit),
                                    delivery: OTLPDelivery(sender: metricsSender, retryWait: retryWait), serviceName: serviceName,
                                    interval: metricsInterval)
        self.exportTimeout = exportTimeout
    }

    deinit {
        batcher.stop()
        metrics.stop()
    }

    /// Queues `spans` for the collector and returns at once; what does not fit is dropped and counted.
    public func export(_ spans: [TraceSpan]) {
        batcher.enqueue(spans)
    }

    /// Adds `measurement` to its series; it goes out with the next export.
    public func record(_ measurement: MetricMeasurement) {
        metrics.measured(metrics.aggregator.record(measurement))
    }

    /// Sends every span queued and every measurement made so far, and returns once each is
    /// delivered or dropped, or once `exportTimeout` has passed (what is still under way goes on).
    public func flush() async {
        await Self.within(exportTimeout) { [batcher, metrics] in
            async let spans: Void = batcher.flush(tryingOnce: false)
            async let measurements: Void = metrics.flush(tryingOnce: false)
            _ = await (spans, measurements)
        }
    }

    /// Sends every span queued and every measurement made so far, one try per batch, then stops:
    /// spans and measurements afterwards are dropped. Returns within `exportTimeout`: what is not
    /// delivered by then is dropped and counted.
    public func shutdown() async {
        await Self.within(exportTimeout) { [batcher, metrics] in
            async let spans: Void = batcher.flush(tryingOnce: true)
            async let measurements: Void = metrics.flush(tryingOnce: true)
            _ = await (spans, measurements)
        }
        batcher.stop()
        metrics.stop()
    }

    /// Runs `operation` until it returns or `bound` has passed, whichever comes first (then
    /// cancels it, which ends a flush's wait).
    private static func within(_ bound: Duration, _ operation: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await operation() }
            group.addTask { try? await Task.sleep(for: bound) }
            await group.next()
            group.cancelAll()
        }
    }

    /// How many spans were dropped: a full queue, a batch refused or still failing after its retries, or after `shutdown()`.
    public var droppedSpans: Int { batcher.counts.dropped }
    /// How many spans the collector accepted.
    public var deliveredSpans: Int { batcher.counts.delivered }
    /// How many spans wait to go out (at most `maximumQueueSize`, besides the batch being sent).
    public var queuedSpans: Int { batcher.counts.queued }
    /// Where the spans go: the collector's `/v1/traces`.
    public var endpoint: URL { batcher.delivery.sender.endpoint }
}
