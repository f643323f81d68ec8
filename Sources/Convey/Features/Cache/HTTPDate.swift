import Foundation

/// Parses the three date formats HTTP allows (RFC 9110 §5.6.7) exactly, without `DateFormatter`,
/// which is slow on Linux and would dominate a disk hit.
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (what servers send)
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// Every separator, width and field must be where the grammar puts it: two-digit years in
/// IMF-fixdate, a missing comma, doubled spaces or dashes in the wrong form make the date
/// invalid (so an `Expires` with such a date means "already expired"). Only letter case is
/// lenient (`sun, 06 NOV 1994 08:49:37 gmt` parses).
enum HTTPDate {
    /// The instant a date field names, or `nil` when it is not a valid HTTP date.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        return imfFixdate(bytes) ?? rfc850(bytes) ?? asctime(bytes)
    }

    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP hh:mm:ss SP "GMT"`, exactly 29 bytes.
    private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 29, dayNames.contains(lowercased(bytes[0..<3])), bytes[3] == comma, bytes[4] == space,
              bytes[7] == space, bytes[11] == space, bytes[16] == space, bytes[25] == space,
              lowercased(bytes[26..<29]) == "gmt",
              let day = digits(bytes[5..<7]), let month = month(bytes[8..<11]), let year = digits(bytes[12..<16])
        else { return nil }
        return date(year: year, month: month, day: day, time: bytes[17..<25])
    }

    /// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP hh:mm:ss SP "GMT"`.
    private static func rfc850(_ bytes: [UInt8]) -> Date? {
        guard let commaIndex = bytes.firstIndex(of: comma), longDayNames.contains(lowercased(bytes[..<commaIndex])),
              bytes.count == commaIndex + 24
        else { return nil }
        let rest = Array(bytes[(commaIndex + 1)...])
        guard rest[0] == space, rest[3] == dash, rest[7] == dash, rest[10] == space, rest[19] == space,
              lowercased(rest[20..<23]) == "gmt",
              let day = digits(rest[1..<3]), let month = month(rest[4..<7]), let shortYear = digits(rest[8..<10])
        else { return nil }
        return date(year: fullYear(shortYear), month: month, day: day, time: rest[11..<19])
    }

    /// `day-name SP month SP ( 2DIGIT / SP 1DIGIT ) SP hh:mm:ss SP 4DIGIT`, exactly 24 bytes.
    private static func asctime(_ bytes: [UInt8]) -> Date? {
        guard bytes.count == 24, dayNames.contains(lowercased(bytes[0..<3])), bytes[3] == space, bytes[7] == space,
              bytes[10] == space, bytes[19] == space, let month = month(bytes[4..<7]),
              let day = bytes[8] == space ? digits(bytes[9..<10]) : digits(bytes[8..<10]), let year = digits(bytes[20..<24])
        else { return nil }
        return date(year: year, month: month, day: day, time: bytes[11..<19])
    }

    /// RFC 9110 §5.6.7: a two-digit year more than 50 years in the future means the most recent
    /// past year with the same last two digits.
    private static func fullYear(_ twoDigits: Int) -> Int {
        let currentYear = 1970 + Int(Date().timeIntervalSince1970 / 31_556_952)
        let candidate = currentYear / 100 * 100 + twoDigits
        return candidate > currentYear + 50 ? candidate - 100 : candidate
    }

    private static let space = UInt8(ascii: " "), comma = UInt8(ascii: ","), dash = UInt8(ascii: "-"), colon = UInt8(ascii: ":")

    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func month(_ bytes: ArraySlice<UInt8>) -> Int? {
        months.firstIndex(of: lowercased(bytes)).map { $0 + 1 }
    }

    private static func digits(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The instant of a checked date and `hh:mm:ss` time, or `nil` when a part is out of range.
    private static func date(year: Int, month: Int, day: Int, time: ArraySlice<UInt8>) -> Date? {
        let start = time.startIndex
        guard time.count == 8, time[start + 2] == colon, time[start + 5] == colon,
              let hours = digits(time[start..<start + 2]), let minutes = digits(time[start + 3..<start + 5]),
              let seconds = digits(time[start + 6..<start + 8]),
              hours < 24, minutes < 60, seconds < 61, (1...daysInMonth(month, year: year)).contains(day)
        else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(secondsSince1970(year: year, month: month, day: day,
                                                                         hours: hours, minutes: minutes, seconds: seconds)))
    }

    /// Seconds from 1970-01-01 00:00:00 UTC to a checked date and time, in 64 bits, as `HARDate`
    /// counts: `Int` has 32 on watchOS (arm64_32, armv7k), where the seconds of any date from
    /// 2038-01-19 on, or before 1901-12-13, would overflow it and trap.
    static func secondsSince1970(year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int) -> Int64 {
        // The day count fits 32 bits for any four-digit year (under 3 million); only the seconds need 64.
        Int64(daysFromCivil(year: year, month: month, day: day)) * 86_400 + Int64(hours * 3600 + minutes * 60 + seconds)
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
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
