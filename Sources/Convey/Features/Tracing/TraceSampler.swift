/// Which traces a traced server records, as OpenTelemetry's `ParentBased(root: TraceIdRatioBased(ratio))`
/// sampler decides: a run inside a context follows its parent's sampled flag; a run that begins
/// a new trace is sampled when the trace id's randomness reaches the ratio's threshold.
///
/// `TraceIdRatioBased` as the specification defines it: the randomness `R` is the lowest 56
/// bits (the rightmost 7 bytes) of the trace id, which W3C Trace Context level 2 makes random
/// and Convey's ids are; the rejection threshold is `T = (1 - ratio) × 2^56`; a trace is sampled
/// when `R >= T`. The decision depends on the trace id alone, so every service with the same
/// ratio decides alike, and a trace sampled at a ratio is sampled at every higher one.
struct TraceSampler: Sendable, Hashable {
    /// The share of new traces sampled, from 0 to 1.
    let ratio: Double
    /// `T`: new traces whose randomness is below it are not sampled. 2^56 samples none.
    let threshold: UInt64

    /// 2^56: one more than the largest randomness.
    private static let randomnessRange: UInt64 = 1 << 56

    /// A sampler of `ratio` of new traces: 1 (or more) samples all, 0 (or less, or not a number) none.
    init(ratio: Double) {
        let clamped = ratio.isNaN ? 0 : min(max(ratio, 0), 1)
        self.ratio = clamped
        let rejected = ((1 - clamped) * Double(Self.randomnessRange)).rounded()
        threshold = rejected >= Double(Self.randomnessRange) ? Self.randomnessRange : UInt64(rejected)
    }

    /// Samples every trace: OpenTelemetry's default, `ParentBased(root: AlwaysOn)`.
    static let always = TraceSampler(ratio: 1)

    /// Whether a new trace with id `trace` is sampled: its randomness reaches the threshold.
    func samplesNewTrace(_ trace: TraceID) -> Bool {
        trace.low & (Self.randomnessRange - 1) >= threshold
    }

    /// Whether a run is sampled: as `parent` says when the run continues a trace, otherwise as the
    /// ratio decides for the new trace `trace`.
    func isSampled(parent: TraceContext?, newTrace trace: TraceID) -> Bool {
        parent?.isSampled ?? samplesNewTrace(trace)
    }
}
