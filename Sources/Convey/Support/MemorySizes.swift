/// Sizes as memory holds them. Files and limits count in `Int64`; memory counts in `Int`, which
/// has 32 bits on watchOS, where `Int(size)` traps at 2 GiB. These conversions never trap: a
/// limit is lowered to what memory can count, and a size beyond that is refused by the caller
/// with its own typed error.
enum MemorySizes {
    /// The most bytes one buffer may hold under `limit` where sizes count as `Counter`: `limit`,
    /// or one less than `Counter.max` when `limit` is more (so that one byte past the limit can
    /// still be counted, to tell a body over the limit from one at it), never negative.
    static func bufferLimit<Counter: FixedWidthInteger>(_ limit: Int64, countingIn _: Counter.Type = Int.self) -> Int64 {
        let largest = Int64(clamping: Counter.max) - 1
        return min(max(limit, 0), largest)
    }

    /// How many bytes to read to learn whether there are more than `limit`: one past
    /// `bufferLimit(limit)`, as `Counter`.
    static func readCount<Counter: FixedWidthInteger>(toExceed limit: Int64, as _: Counter.Type = Int.self) -> Counter {
        // `bufferLimit` is at most `Counter.max - 1`, so one more fits.
        Counter(bufferLimit(limit, countingIn: Counter.self) + 1)
    }

    /// `a + b`, or `Int64.max` when the sum does not fit.
    static func sum(_ a: Int64, _ b: Int64) -> Int64 {
        let (total, overflowed) = a.addingReportingOverflow(b)
        return overflowed ? .max : total
    }
}
