import Foundation

/// The metrics step, nearest the wire after tracing's: each request that goes on the wire (each
/// attempt, each redirect hop) is measured from when it goes out until its response's body ends
/// (a stream's, once read) or it fails, as OpenTelemetry's HTTP client conventions say:
/// `http.client.request.duration`, `http.client.active_requests` and the bodies' sizes. In a
/// sampled trace, the duration's exemplar names the request's client span. A transport that knows
/// its connections reports them through the request's `connectionObserver`, which this step sets.
struct MetricsStep: ChainStep {
    let recorder: MetricsRecorder
    /// What the transport reports its connections to: this server's recorder.
    let connections: MetricsConnectionObserver

    /// The step of a server whose configuration asks for metrics, or `nil`.
    @ConveyActor
    init?(plan: RunPlan) {
        guard let recorder = plan.server.storedConfiguration.metrics?.recorder else { return nil }
        self.recorder = recorder
        connections = MetricsConnectionObserver(recorder: recorder)
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        var attributes = MetricAttributes(method: request.request.method, url: request.request.url)
        let recorder = recorder
        recorder.requestStarted(attributes)
        let start = ContinuousClock.now
        let requestBodySize = Self.bodySize(of: request)
        let exemplar = context.run[TracedRun.self].flatMap { run in
            run.isSampled ? TracedExchange.span.map { MetricExemplar(trace: run.trace, span: $0) } : nil
        }
        var exchange: Exchange
        do {
            var observed = request
            observed.connectionObserver = connections
            exchange = try await next(observed, context)
        } catch {
            attributes.add(error)
            recorder.requestEnded(attributes, duration: start.duration(to: .now), requestBodySize: requestBodySize, responseBodySize: nil,
                                  exemplar: exemplar)
            throw error
        }
        attributes.add(status: exchange.head.statusCode, protocolVersion: exchange.metrics.httpVersion ?? exchange.head.httpVersion)
        let received = Locked(0)
        let measured = attributes
        exchange.body = await exchange.body.observed(chunk: { chunk in received.withLock { $0 += chunk.count } }, end: { error in
            var ended = measured
            if let error { ended.add(error) }
            recorder.requestEnded(ended, duration: start.duration(to: .now), requestBodySize: requestBodySize,
                                  responseBodySize: received.value, exemplar: exemplar)
        })
        return exchange
    }

    /// The size of the request's body: in memory, or its file's.
    private static func bodySize(of request: TransportRequest) -> Int? {
        if let body = request.request.body { return body.count }
        guard let file = request.bodyFile else { return nil }
        return (try? FileManager.default.attributesOfItem(atPath: file.path(percentEncoded: false))[.size] as? NSNumber)?.intValue
    }
}

/// Counts what the cache did with each request that reached it (`convey.cache.requests` by
/// outcome), just above the cache's step: an answer from the cache is counted here, never as a
/// request on the wire.
struct CacheMetricsStep: ChainStep {
    let recorder: MetricsRecorder

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let exchange = try await next(request, context)
        var attributes = MetricAttributes(method: request.request.method, url: request.request.url)
        attributes.cacheStatus = exchange.tags[CacheStatus.self] ?? .network
        recorder.cacheRequest(attributes)
        return exchange
    }
}
