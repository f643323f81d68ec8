import Foundation
import Testing
@testable import Convey

/// The parent-based sampler with a trace-id ratio for new traces: OpenTelemetry's
/// `TraceIdRatioBased` (sampled when the lowest 56 bits of the trace id reach `(1 - ratio) × 2^56`).
@Suite("Trace sampler")
struct TraceSamplerTests {
    /// A trace id whose lowest 56 bits are `randomness`, with other bits set above them, which
    /// must not count.
    private func trace(randomness: UInt64) -> TraceID {
        TraceID(high: 0xFFFF_FFFF_FFFF_FFFF, low: 0xAB00_0000_0000_0000 | randomness)
    }

    @Test("Ratio 0.5: the threshold is 2^55, so trace ids at or above it are sampled and those just below are not")
    func halfRatio() {
        let sampler = TraceSampler(ratio: 0.5)
        #expect(sampler.threshold == 1 << 55)
        #expect(sampler.samplesNewTrace(trace(randomness: 0x80_0000_0000_0000)))
        #expect(sampler.samplesNewTrace(trace(randomness: 0xFF_FFFF_FFFF_FFFF)))
        #expect(!sampler.samplesNewTrace(trace(randomness: 0x7F_FFFF_FFFF_FFFF)))
        #expect(!sampler.samplesNewTrace(trace(randomness: 0)))
    }

    @Test("Ratio 0.25: the threshold is 3 × 2^54; the high byte of the trace id's low half does not count")
    func quarterRatio() {
        let sampler = TraceSampler(ratio: 0.25)
        #expect(sampler.threshold == 3 << 54)
        #expect(sampler.samplesNewTrace(trace(randomness: 3 << 54)))
        #expect(!sampler.samplesNewTrace(trace(randomness: (3 << 54) - 1)))
        // All ones above the 56 bits, nothing in them: not sampled.
        #expect(!sampler.samplesNewTrace(TraceID(high: 1, low: 0xFF00_0000_0000_0000)))
    }

    @Test("Ratio 1 samples every trace, ratio 0 none, and out-of-range ratios are clamped")
    func edges() {
        #expect(TraceSampler(ratio: 1).threshold == 0)
        #expect(TraceSampler(ratio: 1).samplesNewTrace(trace(randomness: 0)))
        #expect(!TraceSampler(ratio: 0).samplesNewTrace(trace(randomness: 0xFF_FFFF_FFFF_FFFF)))
        #expect(TraceSampler(ratio: 7).ratio == 1)
        #expect(TraceSampler(ratio: -1).ratio == 0)
        #expect(!TraceSampler(ratio: .nan).samplesNewTrace(trace(randomness: 0xFF_FFFF_FFFF_FFFF)))
    }

    @Test("A trace sampled at a ratio is sampled at every higher ratio")
    func monotonic() {
        let traces = (0..<2000).map { _ in TraceIdentifiers.traceID() }
        let ratios = [0.01, 0.1, 0.3, 0.5, 0.9, 1]
        for (lower, higher) in zip(ratios, ratios.dropFirst()) {
            let low = TraceSampler(ratio: lower)
            let high = TraceSampler(ratio: higher)
            #expect(traces.allSatisfy { !low.samplesNewTrace($0) || high.samplesNewTrace($0) })
        }
        // Convey's ids are random: about a tenth of 2000 at 0.1 (binomial, 7 standard deviations either side).
        let sampled = traces.filter(TraceSampler(ratio: 0.1).samplesNewTrace).count
        #expect((105...295).contains(sampled))
    }

    @Test("Parent-based: a run inside a context follows its sampled flag whatever the ratio")
    func followsTheParent() throws {
        let sampledParent = try #require(TraceContext(traceparent: TraceContextTests.valid))
        let unsampledParent = try #require(TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"))
        #expect(TraceSampler(ratio: 0).isSampled(parent: sampledParent, newTrace: trace(randomness: 0)))
        #expect(!TraceSampler(ratio: 1).isSampled(parent: unsampledParent, newTrace: trace(randomness: 0xFF_FFFF_FFFF_FFFF)))
        #expect(TraceSampler(ratio: 0.5).isSampled(parent: nil, newTrace: trace(randomness: 0x80_0000_0000_0000)))
        #expect(!TraceSampler(ratio: 0.5).isSampled(parent: nil, newTrace: trace(randomness: 1)))
    }

    @Test("TracingConfiguration keeps its sampler in step with sampleRatio")
    func configuration() {
        var tracing = TracingConfiguration(sampleRatio: 0.25)
        #expect(tracing.sampler.threshold == 3 << 54)
        tracing.sampleRatio = 1
        #expect(tracing.sampler == TraceSampler.always)
        #expect(TracingConfiguration().sampler == .always)
    }
}
