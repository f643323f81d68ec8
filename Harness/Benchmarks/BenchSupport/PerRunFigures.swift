import Convey
import Foundation

/// A step that passes the request on: what a step in the seam costs with no work of its own.
public struct PassingOn: Interceptor {
    /// A step that changes nothing.
    public init() {}

    /// Calls the rest of the chain with the request as it came.
    public func intercept(_ request: OutgoingRequest,
                          next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        try await next(request)
    }
}

/// CPU µs and calls to the C allocator per run, over `count` runs of `run` one after another on
/// the caller's executor (allocations `nil` without the preloaded counter).
public func perRunFigures(count: Int, isolation: isolated (any Actor)? = #isolation,
                          _ run: () async throws -> Void) async throws -> (cpu: Double, allocations: Double?) {
    let cpu = ProcessFigures.cpuMicroseconds
    let allocations = ProcessFigures.allocations
    for _ in 0..<count { try await run() }
    let spentCPU = (ProcessFigures.cpuMicroseconds - cpu) / Double(count)
    guard let before = allocations, let after = ProcessFigures.allocations else { return (spentCPU, nil) }
    return (spentCPU, Double(after - before) / Double(count))
}

/// `median (lowest–highest)` of `values`, or `–` for none.
public func medianAndRange(_ values: [Double], digits: Int = 1) -> String {
    let sorted = values.sorted()
    guard let low = sorted.first, let high = sorted.last else { return "–" }
    return String(format: "%.\(digits)f (%.\(digits)f–%.\(digits)f)", sorted[sorted.count / 2], low, high)
}

/// A span exporter that drops what it gets: tracing's whole cost in the run, none of the export's.
public struct DroppingSpans: SpanExporter {
    public init() {}
    public func export(_ spans: [TraceSpan]) {}
}

extension ServerConfiguration {
    /// Issue 40's measured setup: one pass-through step around each exchange and tracing on, its
    /// spans made and dropped.
    public mutating func passThroughStepAndTracing() {
        exchangeInterceptors = [PassingOn()]
        tracing = TracingConfiguration(exporter: DroppingSpans())
    }
}
