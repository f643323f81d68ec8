@_spi(Tools) import Convey

/// Prints a demo step: heading, what went on the wire, the hooks, the result.
struct DemoPrinter {
    let console: Console

    func heading(_ step: DemoStep, number: Int, of count: Int) {
        let title = "━━ \(number)/\(count)  \(step.title) "
        console.out()
        console.out(console.styled(title + String(repeating: "━", count: max(3, 78 - title.count)), .boldCyan))
        console.out(step.explanation)
    }

    func details(wire: [String], hooks: [(hook: String, detail: String)]) {
        if !wire.isEmpty {
            console.out()
            console.out(console.styled("  On the wire", .bold))
            for line in wire.joined(separator: "\n").split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
                console.out(console.styled("  │ ", .dim) + DisplayFormat.terminalSafe(String(line)))
            }
        }
        if !hooks.isEmpty {
            console.out()
            console.out(console.styled("  Hooks", .bold))
            let width = (hooks.map(\.hook.count).max() ?? 0) + 2
            for entry in hooks {
                console.out(console.styled("  │ ", .dim) + console.styled(entry.hook.padding(toLength: width, withPad: " ", startingAt: 0), .cyan) + DisplayFormat.terminalSafe(entry.detail))
            }
        }
    }

    func result(_ outcome: DemoStep.Outcome) {
        console.out()
        switch outcome {
        case .behaved(let text): console.out(console.styled("  ✓ ", .boldGreen) + DisplayFormat.terminalSafe(text))
        case .notAvailableYet(let text): console.out(console.styled("  ○ not available yet: ", .boldYellow) + DisplayFormat.terminalSafe(text))
        case .misbehaved(let text): console.out(console.styled("  ✗ misbehaved: ", .boldRed) + DisplayFormat.terminalSafe(text))
        }
    }
}
