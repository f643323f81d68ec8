import Foundation
import Testing
@testable import Convey

// A stand-in for the part of swift-distributed-tracing (module `Tracing`, 1.x) that the adapter in
// Docs/tracing.md uses, with the same names and shapes, so that the adapter compiles here as
// written there. The real package is not a dependency: Convey takes none.

private enum SpanKind { case server, client, producer, consumer, `internal` }

private enum SpanAttribute: Equatable {
    case int64(Int64), string(String)
}

private protocol SpanAttributeConvertible { func toSpanAttribute() -> SpanAttribute }
extension String: SpanAttributeConvertible { fileprivate func toSpanAttribute() -> SpanAttribute { .string(self) } }
extension Int: SpanAttributeConvertible { fileprivate func toSpanAttribute() -> SpanAttribute { .int64(Int64(self)) } }

private struct SpanAttributes {
    var stored: [String: SpanAttribute] = [:]
    subscript(_ name: String) -> (any SpanAttributeConvertible)? {
        get { nil }
        set { stored[name] = newValue?.toSpanAttribute() }
    }
}

private struct SpanStatus {
    enum Code { case ok, error }
    let code: Code
    let message: String?
    init(code: Code, message: String? = nil) {
        self.code = code
        self.message = message
    }
}

private protocol TracerInstant { var nanosecondsSinceEpoch: UInt64 { get } }

private enum DefaultTracerClock {
    struct Instant: TracerInstant {
        let nanosecondsSinceEpoch: UInt64
        init(nanosecondsSinceEpoch: UInt64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }
    }
}

private struct SpanEvent {
    let name: String
    let nanosecondsSinceEpoch: UInt64
    init(name: String, at instant: @autoclosure () -> some TracerInstant) {
        self.name = name
        nanosecondsSinceEpoch = instant().nanosecondsSinceEpoch
    }
}

private struct ServiceContext {
    var parentName: String?
    static var topLevel: ServiceContext { ServiceContext() }
}

private protocol Span: AnyObject {
    var context: ServiceContext { get }
    var attributes: SpanAttributes { get set }
    func setStatus(_ status: SpanStatus)
    func addEvent(_ event: SpanEvent)
    func end(at instant: @autoclosure () -> some TracerInstant)
}

private protocol Tracer {
    func startSpan(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                   at instant: @autoclosure () -> some TracerInstant) -> any Span
}

/// What the stand-in tracer was given.
private final class RecordedSpan: Span {
    let name: String
    let kind: SpanKind
    let parentName: String?
    let start: UInt64
    var end: UInt64?
    var attributes = SpanAttributes()
    var status: SpanStatus?
    var events: [SpanEvent] = []

    init(name: String, kind: SpanKind, parentName: String?, start: UInt64) {
        self.name = name
        self.kind = kind
        self.parentName = parentName
        self.start = start
    }

    var context: ServiceContext { ServiceContext(parentName: name) }
    func setStatus(_ status: SpanStatus) { self.status = status }
    func addEvent(_ event: SpanEvent) { events.append(event) }
    func end(at instant: @autoclosure () -> some TracerInstant) { end = instant().nanosecondsSinceEpoch }
}

private final class RecordingTracer: Tracer {
    var started: [RecordedSpan] = []

    func startSpan(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                   at instant: @autoclosure () -> some TracerInstant) -> any Span {
        let span = RecordedSpan(name: operationName, kind: kind, parentName: context().parentName, start: instant().nanosecondsSinceEpoch)
        started.append(span)
        return span
    }
}

private enum InstrumentationSystem {
    nonisolated(unsafe) static var tracer: any Tracer = RecordingTracer()
}

// The adapter, exactly as Docs/tracing.md shows it.

/// Forwards Convey's spans to the tracer the app bootstrapped (`InstrumentationSystem.tracer`).
private struct DistributedTracingExporter: SpanExporter {
    func export(_ spans: [TraceSpan]) {
        let tracer = InstrumentationSystem.tracer
        var started: [String: any Span] = [:]
        // The run's own span first, so that its client spans start inside its context.
        for span in spans.sorted(by: { !$0.isClient && $1.isClient }) {
            let parent = span.parentSpanID.flatMap { started[$0]?.context } ?? .topLevel
            let traced = tracer.startSpan(span.name, context: parent, ofKind: span.isClient ? .client : .internal, at: instant(span.start))
            for (name, value) in span.attributes { traced.attributes[name] = value }
            for (name, value) in span.integerAttributes { traced.attributes[name] = value }
            for event in span.events { traced.addEvent(SpanEvent(name: event.name, at: instant(event.date))) }
            if span.isError { traced.setStatus(SpanStatus(code: .error, message: span.statusMessage)) }
            traced.end(at: instant(span.end))
            started[span.spanID] = traced
        }
    }

    private func instant(_ date: Date) -> DefaultTracerClock.Instant {
        DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(date.timeIntervalSince1970 * 1_000_000_000))
    }
}

@Suite("The swift-distributed-tracing adapter of Docs/tracing.md", .serialized)
struct DistributedTracingAdapterTests {
    @Test("A run's spans reach the tracer: the run's span first, its client span inside it, attributes and status kept")
    func forwardsARun() throws {
        let tracer = RecordingTracer()
        InstrumentationSystem.tracer = tracer
        let trace = TraceIdentifiers.traceID()
        let run = TraceIdentifiers.spanID()
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let client = TraceSpan(trace: trace, span: TraceIdentifiers.spanID(), parent: run, name: "GET", isClient: true, start: start,
                               end: start.addingTimeInterval(0.5), attributes: ["http.request.method": "GET", "error.type": "503"],
                               integerAttributes: ["http.response.status_code": 503],
                               events: [(name: "convey.first_byte", date: start.addingTimeInterval(0.25))],
                               isError: true, statusMessage: nil, traceState: nil)
        let runSpan = TraceSpan(trace: trace, span: run, parent: nil, name: "FetchFeed", isClient: false, start: start,
                                end: start.addingTimeInterval(1), attributes: ["convey.cache.status": "network"],
                                integerAttributes: ["http.response.status_code": 503], isError: true, statusMessage: nil, traceState: nil)

        DistributedTracingExporter().export([client, runSpan])

        try #require(tracer.started.count == 2)
        let (first, second) = (tracer.started[0], tracer.started[1])
        #expect(first.name == "FetchFeed")
        #expect(first.kind == .internal)
        #expect(first.parentName == nil)
        #expect(second.name == "GET")
        #expect(second.kind == .client)
        #expect(second.parentName == "FetchFeed")
        #expect(second.attributes.stored["http.response.status_code"] == .int64(503))
        #expect(second.attributes.stored["error.type"] == .string("503"))
        #expect(second.status?.code == .error)
        #expect(second.events.map(\.name) == ["convey.first_byte"])
        #expect(second.start == 1_700_000_000_000_000_000)
        #expect(second.end == 1_700_000_000_500_000_000)
    }
}
