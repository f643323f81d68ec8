import Foundation

/// Parses the three date formats HTTP allows (RFC 9110 §5.6.7), without `DateFormatter`, which
/// is slow on Linux and would dominate a disk hit.
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (what servers send)
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
/// - asctime: `Sun Nov  6 08:49:37 1994`
enum HTTPDate {
    /// The instant a date field names, or `nil` when it is not a valid HTTP date.
    static func parse(_ text: String) -> Date? {
        let tokens = text.utf8.split { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "-") }
        let day: Substring.UTF8View, month: Substring.UTF8View, year: Substring.UTF8View, time: Substring.UTF8View
        switch tokens.count {
        case 6 where String(Substring(tokens[5])) == "GMT":
            (day, month, year, time) = (tokens[1], tokens[2], tokens[3], tokens[4])
        case 5:
            (month, day, time, year) = (tokens[1], tokens[2], tokens[3], tokens[4])
        default:
            return nil
        }
        guard let dayNumber = number(day), (1...31).contains(dayNumber),
              let monthNumber = months.firstIndex(of: String(Substring(month))).map({ $0 + 1 }),
              var yearNumber = number(year),
              let clock = clockTime(time)
        else { return nil }
        if year.count == 2 { yearNumber += yearNumber < 70 ? 2000 : 1900 }
        guard year.count == 2 || year.count == 4 else { return nil }
        let days = daysFromCivil(year: yearNumber, month: monthNumber, day: dayNumber)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + clock))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func number(_ digits: Substring.UTF8View) -> Int? {
        guard !digits.isEmpty, digits.count <= 4 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// Seconds since midnight from `hh:mm:ss`.
    private static func clockTime(_ text: Substring.UTF8View) -> Int? {
        let parts = text.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
              let hours = number(parts[0]), let minutes = number(parts[1]), let seconds = number(parts[2]),
              hours < 24, minutes < 60, seconds < 61
        else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
