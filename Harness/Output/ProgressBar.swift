@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// A one-line progress bar on standard error for long transfers.
///
/// It stays silent for the first half second, so quick requests print nothing; on a terminal it
/// redraws in place at most ten times a second, elsewhere (`--progress` into a file) it writes a
/// line per redraw.
final class ProgressBar: @unchecked Sendable {  // guarded by: its NSLock
    private let console: Console
    private let forced: Bool
    private let lock = NSLock()
    private var startedAt: ContinuousClock.Instant?
    private var lastDrawn: ContinuousClock.Instant?
    private var latest = TransferProgress()
    private var drewSomething = false

    /// - Parameter forced: draw even when standard error is not a terminal (`--progress`).
    init(console: Console, forced: Bool) {
        self.console = console
        self.forced = forced
    }

    /// Whether a bar should be drawn at all.
    var isEnabled: Bool { forced || console.errorIsTerminal }

    func start() {
        lock.withLock {
            startedAt = .now
            lastDrawn = nil
            latest = TransferProgress()
        }
    }

    func update(_ progress: TransferProgress) {
        let line: String? = lock.withLock {
            latest = progress
            guard isEnabled, let startedAt else { return nil }
            let now = ContinuousClock.now
            let finished = progress.totalBytesToReceive.map { progress.bytesReceived >= $0 } ?? false
            guard startedAt.duration(to: now) >= .milliseconds(500) || (forced && finished) else { return nil }
            if let lastDrawn, lastDrawn.duration(to: now) < .milliseconds(100), !finished { return nil }
            lastDrawn = now
            drewSomething = true
            return render(progress, elapsed: startedAt.duration(to: now))
        }
        if let line { draw(line) }
    }

    /// Ends the bar: on a terminal the line is cleared, elsewhere the last state stays.
    func finish() {
        let cleared = lock.withLock {
            defer { startedAt = nil; drewSomething = false }
            return drewSomething
        }
        guard cleared else { return }
        FileHandle.standardError.write(Data((console.errorIsTerminal ? "\r\u{1B}[K" : "\n").utf8))
    }

    private func draw(_ line: String) {
        FileHandle.standardError.write(Data((console.errorIsTerminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    /// `↓ [██████░░░░░░░░░░░░░░]  31%  310.0 KB / 1.0 MB  1.2 MB/s`.
    private func render(_ progress: TransferProgress, elapsed: Duration) -> String {
        let uploading = progress.bytesReceived == 0 && progress.bytesSent > 0
            && progress.totalBytesToSend.map { progress.bytesSent < $0 } ?? false
        let done = uploading ? progress.bytesSent : progress.bytesReceived
        let total = uploading ? progress.totalBytesToSend : progress.totalBytesToReceive
        let seconds = max(elapsed / .seconds(1), 0.001)
        let rate = DisplayFormat.byteCount(Int64(Double(done) / seconds)) + "/s"
        var line = uploading ? "↑ " : "↓ "
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let filled = Int(fraction * 20)
            line += "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: 20 - filled) + "] "
            line += String(format: "%3d%%", Int(fraction * 100)) + "  \(DisplayFormat.byteCount(done)) / \(DisplayFormat.byteCount(total))"
        } else {
            line += DisplayFormat.byteCount(done)
        }
        return console.styledError(line + "  " + rate, .cyan)
    }
}
