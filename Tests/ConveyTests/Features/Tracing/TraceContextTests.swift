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
        let longest = (0..<32).map { "k\(String(format: "%02d", $0))=" + String(repeating: "v", count: 11) }.joined(separator: ",")
        #expect(longest.utf8.count == 511)
        #expect(TraceContext(traceparent: Self.valid, tracestate: longest)?.traceState == longest)
        #expect(TraceContext(traceparent: Self.valid, tracestate: longest + "v")?.traceState?.utf8.count == 512)
        #expect(TraceContext(traceparent: Self.valid, tracestate: longest + "vv")?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: "a=b\r\nX-Injected: 1")?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: "  ")?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: " , ,")?.traceState == nil)
    }

    @Test("At most 32 list members: 32 are kept, 33 or a hostile 40 drop the whole tracestate")
    func listMemberLimit() {
        func members(_ count: Int) -> String { (1...count).map { "v\($0)=\($0)" }.joined(separator: ",") }
        #expect(TraceContext(traceparent: Self.valid, tracestate: members(32))?.traceState == members(32))
        #expect(TraceContext(traceparent: Self.valid, tracestate: members(33))?.traceState == nil)
        #expect(TraceContext(traceparent: Self.valid, tracestate: members(40))?.traceState == nil)
        // Empty members and whitespace around members do not count, as the specification allows.
        let spaced = " a=1 ,, \tb=2\t,"
        #expect(TraceContext(traceparent: Self.valid, tracestate: spaced)?.traceState == spaced)
    }

    /// Values W3C Trace Context's `tracestate` grammar allows.
    static let validTraceStates = [
        "rojo=00f067aa0ba902b7", "congo=t61rcWkgMzE", "a_b-c*d/e=1", "tenant@system=x", "0tenant@vendor1=x",
        "k=a value with spaces", "k=!\"#$%&'()*+-./:;<>?@[\\]^_`{|}~",
    ]

    /// Values it does not allow, each for one reason.
    static let invalidTraceStates: [(String, String)] = [
        ("an uppercase key", "Rojo=1"),
        ("a key starting with a digit", "1abc=1"),
        ("a key with a dot", "ro.jo=1"),
        ("a system id starting with a digit", "tenant@1system=1"),
        ("a system id longer than 14", "tenant@abcdefghijklmno=1"),
        ("a tenant id longer than 241", String(repeating: "t", count: 242) + "@s=1"),
        ("a simple key longer than 256", String(repeating: "k", count: 257) + "=1"),
        ("an empty key", "=1"),
        ("no equals sign", "rojo"),
        ("an empty value", "rojo="),
        ("an equals sign in the value", "rojo=a=b"),
        ("a value longer than 256", "k=" + String(repeating: "v", count: 257)),
        ("a control character in the value", "k=a\u{1}b"),
        ("a tab in the value", "k=a\tb"),
        ("a non-ASCII value", "k=café"),
        ("a key twice", "a=1,b=2,a=3"),
        ("one bad member among good ones", "a=1,B=2,c=3"),
    ]

    @Test("Each tracestate the grammar allows is kept as it is", arguments: validTraceStates)
    func keepsValidTraceStates(_ value: String) {
        #expect(TraceContext(traceparent: Self.valid, tracestate: value)?.traceState == value)
    }

    @Test("A tracestate the grammar refuses is dropped whole", arguments: invalidTraceStates)
    func dropsInvalidTraceStates(_ reason: String, _ value: String) {
        #expect(TraceContext(traceparent: Self.valid, tracestate: value)?.traceState == nil, "\(reason)")
        #expect(TraceContext(traceparent: Self.valid, tracestate: value) != nil, "the trace itself is kept: \(reason)")
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
