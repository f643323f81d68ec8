/// Writes JSON text as bytes, one value after another, for HAR entries: keys in the order HAR
/// lists them (readable, and diffable between captures) and no intermediate objects, so writing
/// an entry costs one pass over its strings.
///
/// The caller writes a well-formed document: `beginObject`, `key`, a value, … `endObject`.
/// Commas and indentation are the writer's.
struct HARJSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the container being written holds a member yet, innermost last.
    private var hasMembers: [Bool] = []
    /// Whether the next value completes a `key:` already written (no comma, no new line before it).
    private var afterKey = false
    /// Spaces per level; 0 writes one line.
    private let indent: Int
    /// The level of the outermost container, for writing a fragment (one entry) inside a larger document.
    private let baseLevel: Int

    init(indent: Int = 2, baseLevel: Int = 0) {
        self.indent = indent
        self.baseLevel = baseLevel
    }

    /// Empties the bytes written so far, keeping their storage.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    mutating func beginObject() {
        beforeValue()
        bytes.append(UInt8(ascii: "{"))
        hasMembers.append(false)
    }

    mutating func endObject() {
        endContainer(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        beforeValue()
        bytes.append(UInt8(ascii: "["))
        hasMembers.append(false)
    }

    mutating func endArray() {
        endContainer(UInt8(ascii: "]"))
    }

    /// A member's name; its value follows.
    mutating func key(_ name: String) {
        beforeValue()
        appendString(name)
        bytes.append(UInt8(ascii: ":"))
        if indent > 0 { bytes.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    mutating func string(_ value: String) {
        beforeValue()
        appendString(value)
    }

    mutating func integer(_ value: some BinaryInteger) {
        beforeValue()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool) {
        beforeValue()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func null() {
        beforeValue()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Milliseconds with at most three decimals (`12.345`, `-1`), never in exponent form.
    mutating func milliseconds(_ value: Double) {
        beforeValue()
        guard value.isFinite else {
            bytes.append(contentsOf: "-1".utf8)
            return
        }
        let microseconds = Int64((value * 1000).rounded())
        let (whole, fraction) = microseconds.magnitude.quotientAndRemainder(dividingBy: 1000)
        var text = (microseconds < 0 ? "-" : "") + String(whole)
        if fraction > 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.last == "0" { digits.removeLast() }
            text += "." + digits
        }
        bytes.append(contentsOf: text.utf8)
    }

    /// `key: value` for a string.
    mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    /// `key: value` for an integer.
    mutating func member(_ name: String, _ value: some BinaryInteger) {
        key(name)
        integer(value)
    }

    /// `key: value` for a flag.
    mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    /// `[{"name": …, "value": …}, …]`: HAR's lists of headers, query parameters and cookies.
    mutating func nameValueList(_ pairs: some Sequence<(name: String, value: String)>) {
        beginArray()
        for pair in pairs {
            beginObject()
            member("name", pair.name)
            member("value", pair.value)
            endObject()
        }
        endArray()
    }

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasMembers.indices.last else { return }
        if hasMembers[last] { bytes.append(UInt8(ascii: ",")) }
        hasMembers[last] = true
        newLine(level: hasMembers.count)
    }

    private mutating func endContainer(_ closing: UInt8) {
        let hadMembers = hasMembers.removeLast()
        if hadMembers { newLine(level: hasMembers.count) }
        bytes.append(closing)
    }

    private mutating func newLine(level: Int) {
        guard indent > 0 else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: (baseLevel + level) * indent))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    private mutating func appendString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
