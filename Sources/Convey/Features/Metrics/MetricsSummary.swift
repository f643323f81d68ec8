import Foundation

/// Request durations per host and status, as a table for people: the `--metrics` table of
/// Convey's harness, fed by the `http.client.request.duration` measurements runs record. Convey's
/// SPI for its own tools (`@_spi(Tools) import Convey`).
///
/// ```
/// host             status            count     p50       p99
/// 127.0.0.1:8080   200                  12   3.1 ms    9.8 ms
/// 127.0.0.1:8080   503                   2   1.2 ms    1.4 ms
/// api.example.com  attemptTimedOut       1    1.00 s    1.00 s
/// ```
///
/// Percentiles are exact (nearest rank) over the durations kept: at most `maximumKept` per row,
/// the first ones; the count goes on past them.
@_spi(Tools) public final class MetricsSummary: MetricsExporter {
    /// The most durations a row keeps for its percentiles.
    public static let maximumKept = 100_000

    private let rows = Locked<[Row: Durations]>([:])

    /// A row: the host (with its port unless the scheme's default) and the status, or the error's type without one.
    private struct Row: Hashable, Sendable {
        let host: String
        let status: String
    }

    /// A row's durations, in seconds, and how many there were.
    private struct Durations: Sendable {
        var count = 0
        var kept: [Double] = []

        mutating func add(_ seconds: Double) {
            count += 1
            if kept.count < MetricsSummary.maximumKept { kept.append(seconds) }
        }
    }

    /// An empty summary.
    public init() {}

    /// Keeps a request's duration under its host and status; other measurements are not in the table.
    public func record(_ measurement: MetricMeasurement) {
        guard measurement.instrument == .requestDuration else { return }
        let attributes = measurement.attributeSet
        var host = attributes.serverAddress ?? "?"
        if host.contains(":") { host = "[\(host)]" }
        if let port = attributes.serverPort, port != attributes.scheme.flatMap(TraceOrigin.defaultPort) { host += ":\(port)" }
        let status = attributes.statusCode.map(String.init) ?? attributes.errorType ?? "?"
        rows.withLock { rows in
            rows[Row(host: host, status: status), default: Durations()].add(measurement.value)
        }
    }

    /// The table's lines: a header, then a row per host and status, hosts and statuses in order;
    /// a single line saying so when no request was measured.
    public var lines: [String] {
        let rows = rows.value
        guard !rows.isEmpty else { return ["No request was measured."] }
        let sorted = rows.keys.sorted { ($0.host, $0.status) < ($1.host, $1.status) }
        var table = [["host", "status", "count", "p50", "p99"]]
        for row in sorted {
            guard let durations = rows[row] else { continue }
            let values = durations.kept.sorted()
            table.append([DisplayFormat.terminalSafe(row.host), DisplayFormat.terminalSafe(row.status), String(durations.count),
                          Self.format(Self.percentile(50, of: values)), Self.format(Self.percentile(99, of: values))])
        }
        let widths = (0..<5).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { cells in
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                // Text left-aligned, figures right-aligned.
                return column < 2 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
    }

    /// The nearest-rank percentile `p` of sorted `values`: the smallest value with at least `p` % of them at or below it.
    static func percentile(_ p: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(values.count)).rounded(.up))
        return values[min(max(rank, 1), values.count) - 1]
    }

    private static func format(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, abs(seconds) < 1e9 else { return "–" }
        return DisplayFormat.duration(.nanoseconds(Int64((seconds * 1e9).rounded())))
    }
}
