/// Byte counts for people: `312 B`, `1.5 KB`, `2.3 MB` (powers of 1000).
enum ByteSize {
    static func text<Count: BinaryInteger>(_ count: Count) -> String {
        let value = Double(count)
        for (limit, unit) in [(1e3, "B"), (1e6, "KB"), (1e9, "MB")] where value < limit {
            return unit == "B" ? "\(count) B" : format(value / (limit / 1e3), unit)
        }
        return format(value / 1e9, "GB")
    }

    private static func format(_ value: Double, _ unit: String) -> String {
        let tenths = (value * 10).rounded()
        return "\(Int(tenths) / 10).\(Int(tenths) % 10) \(unit)"
    }
}
