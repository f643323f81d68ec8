import Foundation
import Testing
@testable import Convey

/// W3C Trace Context level 1: what `traceparent` values are taken, which are refused, and how the
/// context is written back.
@Suite("Trace context")
struct TraceContextTests {
    static let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    @Test("A valid traceparent is read: trace, parent span and sampled flag, tracestate as it is")
    func readsAValidContext() throws {
        let context = try #require(TraceContext(traceparent: Self.valid, tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"))
        #expect(context.traceID == "0af7651916cd43dd8448eb211c80319c")
        #expect(context.spanID == "b7ad6b7169203331")
        #expect(context.isSampled)
        #expect(context.traceState == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        #expect(context.traceparent == Self.valid)
        #expect(context.description == Self.valid)
    }

    @Test("The sampled flag is the lowest bit of the flags: 00 is unsampled, 09 sampled (and written back as 01)")
    func readsTheSampledFlag() throws {
        let unsampled = try #require(TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"))
        #expect(!unsampled.isSampled)
        #expect(unsampled.traceparent.hasSuffix("-00"))
        let otherBits = try #require(TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-09"))
        #expect(otherBits.isSampled)
        #expect(otherBits.traceparent.hasSuffix("-01"))
    }

    /// Each form W3C Trace Context level 1 says a receiver must not take.
    static let invalid: [(String, String)] = [
        ("too short", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01"),
        ("too long for version 00", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"),
        ("all-zero trace id", "00-00000000000000000000000000000000-b7ad6b7169203331-01"),
        ("all-zero parent id", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"),
        ("version ff", "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("uppercase hex", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"),
        ("a non-hex character", "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01"),
        ("a wrong separator", "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        ("non-hex flags", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0x"),
        ("empty", ""),
    ]

    @Test("An invalid traceparent is refused", arguments: invalid)
    func refusesInvalidValues(_ name: String, _ value: String) {
        #expect(TraceContext(traceparent: value, tracestate: "a=b") == nil, "\(name)")
    }

    @Test("A later version is read from its first 55 characters when a dash or the end follows")
    func readsALaterVersion() throws {
        let later = try #require(TraceContext(traceparent: "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-the-future-holds"))
        #expect(later.traceparent == Self.valid)
        #expect(TraceContext(traceparent: "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x") == nil)
    }

    @Test("No traceparent is no context")
    func missingValueIsNoContext() {
        #expect(TraceContext(traceparent: nil) == nil)
    }

    @Test("A tracestate that cannot be passed on is dropped: over 512 characters, a line break, blank")
    func dropsUnusableTraceState() throws {
        #expect(TraceContext(traceparent: Self.valid, tracestate: String(repeating: "a", count: 513))?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: "a=b\r\nX-Injected: 1")?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: "  ")?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: String(repeating: "a", count: 512))?.traceState?.count == 512)
    }

    @Test("New ids are 32 and 16 lowercase hex digits, never zero, and differ from one to the next")
    func newIdentifiers() {
        let traces = (0..<100).map { _ in TraceIdentifiers.traceID() }
        let spans = (0..<100).map { _ in TraceIdentifiers.spanID() }
        #expect(Set(traces).count == 100)
        #expect(Set(spans).count == 100)
        #expect(traces.allSatisfy { $0.isValid && $0.hex.count == 32 && $0.hex.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(spans.allSatisfy { $0 != 0 && TraceHex.string($0).count == 16 })
    }

    @Test("The task-local context is what runs started inside it read")
    func taskLocalContext() async throws {
        let context = try #require(TraceContext(traceparent: Self.valid))
        #expect(TraceContext.current == nil)
        let inside = await TraceContext.$current.withValue(context) { await Task { TraceContext.current }.value }
        #expect(inside == context)
    }
}
