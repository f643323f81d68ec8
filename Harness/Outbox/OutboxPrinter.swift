@_spi(Transport) @_spi(Tools) import Convey
import Foundation

/// Prints outbox items for people or as JSON, masked with `Redaction.standard` and escaped for the terminal.
struct OutboxPrinter {
    let console: Console

    /// What went wrong, for one line.
    static func describe(_ error: any Error) -> String {
        Redaction.standard.maskedText(String(describing: error))
    }

    func outcome(_ item: OutboxItem) {
        let url = Redaction.standard.maskedURL(item.url)
        switch item.state {
        case .delivered(let status, _):
            console.out(console.styled("delivered", .green) + " \(item.id) \(item.method) \(DisplayFormat.terminalSafe(url)) → \(status) (attempts \(item.attempts))")
        case .failed(let error):
            console.out(console.styled("failed", .red) + " \(item.id) \(item.method) \(DisplayFormat.terminalSafe(url)): \(DisplayFormat.terminalSafe(Self.describe(error))) (attempts \(item.attempts))")
        case .pending:
            break
        }
    }

    func retrying(_ item: OutboxItem, error: String) {
        let wait = item.nextAttemptAt.map { max(0, $0.timeIntervalSinceNow) } ?? 0
        console.err(console.styledError("retrying", .yellow) + " \(item.id) after attempt \(item.attempts): \(DisplayFormat.terminalSafe(error)); next in \(String(format: "%.1f", wait)) s")
    }

    func list(_ items: [OutboxItem], damaged: [(name: String, reason: String)], json: Bool) {
        if json {
            let object: [String: Any] = [
                "items": items.map(Self.jsonObject),
                "damaged": damaged.map { ["file": $0.name, "reason": Redaction.standard.maskedText($0.reason)] },
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            console.out(DisplayFormat.terminalSafeJSON(String(decoding: data, as: UTF8.self)))
            return
        }
        if items.isEmpty && damaged.isEmpty { console.out("(empty)") }
        for item in items {
            var line = "\(item.id)  \(item.method.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(Self.stateText(item).padding(toLength: 14, withPad: " ", startingAt: 0))"
            line += " attempts \(item.attempts)  key \(item.idempotencyKey)  \(Redaction.standard.maskedURL(item.url))"
            if let error = item.lastError { line += "  last error: \(Redaction.standard.maskedText(error))" }
            console.out(DisplayFormat.terminalSafe(line))
        }
        for file in damaged {
            console.out(DisplayFormat.terminalSafe("damaged \(file.name): \(Redaction.standard.maskedText(file.reason))"))
        }
    }

    static func stateText(_ item: OutboxItem) -> String {
        switch item.state {
        case .pending: "pending"
        case .delivered(let status, _): "delivered \(status)"
        case .failed: "failed"
        }
    }

    static func jsonObject(_ item: OutboxItem) -> [String: Any] {
        var object: [String: Any] = [
            "id": item.id, "method": item.method.rawValue, "url": Redaction.standard.maskedURL(item.url),
            "state": { () -> String in
                switch item.state {
                case .pending: "pending"
                case .delivered: "delivered"
                case .failed: "failed"
                }
            }(),
            "attempts": item.attempts, "key": item.idempotencyKey, "task": item.taskName,
            "enqueuedAt": ISO8601DateFormatter().string(from: item.enqueuedAt),
            "lastError": item.lastError.map(Redaction.standard.maskedText) ?? NSNull(),
        ]
        switch item.state {
        case .delivered(let status, _): object["status"] = status
        case .failed(let error):
            object["error"] = describe(error)
            if let http = error as? HTTPError { object["status"] = http.statusCode }
        case .pending: object["nextAttemptAt"] = item.nextAttemptAt.map { ISO8601DateFormatter().string(from: $0) } ?? NSNull()
        }
        return object
    }
}
