import Foundation

/// HAR's dates: ISO 8601 in UTC to the millisecond (`2025-11-21T01:20:30.123Z`), in plain integer
/// arithmetic, since an export writes one per entry.
enum HARDate {
    static func text(for date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (seconds, millisecond) = floorDivision(milliseconds, 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = RecordFolder.civilDate(daysSince1970: days)
        return digits(year, 4) + "-" + digits(month, 2) + "-" + digits(day, 2) + "T" + digits(secondOfDay / 3600, 2) + ":"
            + digits(secondOfDay / 60 % 60, 2) + ":" + digits(secondOfDay % 60, 2) + "." + digits(millisecond, 3) + "Z"
    }

    /// Quotient and remainder rounded towards minus infinity, so dates before 1970 come out right.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
