extension OTLPExporter {
    /// How the exporter reports counters and histograms, as OTLP's aggregation temporality says.
    public enum Temporality: Sendable, Hashable {
        /// Each export carries the totals since the exporter began (Prometheus and most backends
        /// want this). The default.
        case cumulative
        /// Each export carries what happened since the previous export (some vendors' backends
        /// want this). Up-down counters stay cumulative, as the specification's delta preference says.
        case delta
    }
}
