/// One HTTP header field.
public struct Header: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The field name, as it will be sent. Names compare case-insensitively in `Headers`.
    public var name: String
    /// The field value.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`, the value masked as `Redaction.standard` masks header values.
    public var description: String { "\(name): \(Redaction.standard.maskedValue(of: self))" }
}

/// Header fields in order, names compared case-insensitively: what a request sends and what a
/// response brought.
///
/// Setting a field (`append`, the subscript) replaces every field of that name, so layered
/// headers (defaults, then server, then task) never send a name twice: the last layer wins.
/// `add` keeps the fields already there, for a name sent more than once:
///
/// ```swift
/// var headers: Headers = ["Accept": "application/json"]
/// headers.add(Header(name: "X-Tag", value: "a"))
/// headers.add(Header(name: "X-Tag", value: "b"))   // goes out as `X-Tag: a, b`
/// ```
///
/// A response's fields (`ResponseHead.fields`) are every field line exactly as received, in order,
/// names as sent, repeats kept apart (two `Age` lines, every `Set-Cookie`), so nothing is lost by
/// joining values that contain commas: `values(named:)` gives each line's value.
///
/// The subscript and `combined` join a repeated name's values with `", "` as RFC 9110 §5.3 allows;
/// `Cookie` values with `"; "`, as RFC 6265 asks (`Cookie` is a request field: a response's
/// `Set-Cookie` lines are joined with `", "`).
public struct Headers: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    CustomStringConvertible {
    private var lines: [Header] = []

    /// No fields.
    public init() {}

    /// Headers from fields in order; a later field replaces an earlier one of the same name.
    public init(_ fields: some Sequence<Header>) {
        for field in fields { append(field) }
    }

    /// Fields exactly as given, in order, repeats kept: a response head as received.
    init(lines: some Sequence<Header>) {
        self.lines = Array(lines)
    }

    /// Headers from `[name: value]` pairs; dictionary order is not kept, so names are sorted.
    public init(_ dictionary: [String: String]) {
        self.init(dictionary.sorted { $0.key < $1.key }.map { Header(name: $0.key, value: $0.value) })
    }

    /// Headers from fields in order, as `init(_:)` makes them.
    public init(arrayLiteral elements: Header...) { self.init(elements) }

    /// Headers from `name: value` pairs in order; a later pair replaces an earlier one of the same name.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Header(name: $0.0, value: $0.1) })
    }

    /// The position of the first field.
    public var startIndex: Int { lines.startIndex }
    /// The position after the last field.
    public var endIndex: Int { lines.endIndex }
    /// The field at this position.
    public subscript(position: Int) -> Header { lines[position] }

    /// Sets a field: it replaces every field with the same name (case-insensitive), in the
    /// place of the first, or goes last when the name is new.
    public mutating func append(_ header: Header) {
        guard let first = lines.firstIndex(where: { $0.name.equalsIgnoringASCIICase(header.name) }) else {
            lines.append(header)
            return
        }
        lines[first] = header
        var index = lines.index(after: first)
        while index < lines.endIndex {
            if lines[index].name.equalsIgnoringASCIICase(header.name) { lines.remove(at: index) } else { index += 1 }
        }
    }

    /// Sets each name in `headers` (replacing earlier fields of that name), keeping the repeats
    /// within `headers`: how one layer of headers goes over another.
    public mutating func append(contentsOf headers: some Sequence<Header>) {
        var setNames: [String] = []
        for header in headers {
            if setNames.contains(where: { $0.equalsIgnoringASCIICase(header.name) }) {
                add(header)
            } else {
                setNames.append(header.name)
                append(header)
            }
        }
    }

    /// Adds a field, keeping any already there with the same name: for names sent more than once.
    /// It goes after the last field of that name, or last when the name is new.
    public mutating func add(_ header: Header) {
        if let last = lines.lastIndex(where: { $0.name.equalsIgnoringASCIICase(header.name) }) {
            lines.insert(header, at: lines.index(after: last))
        } else {
            lines.append(header)
        }
    }

    /// Makes room for `count` fields, so that building a request's fields allocates once.
    mutating func reserveCapacity(_ count: Int) { lines.reserveCapacity(count) }

    /// Adds a field line after all the others, keeping any with the same name: a head's next line.
    mutating func appendLine(_ line: Header) { lines.append(line) }

    /// Appends a folded line's text to the last field's value (obsolete line folding, RFC 9112 §5.2).
    mutating func continueLastField(with text: String) {
        guard !lines.isEmpty else { return }
        lines[lines.count - 1].value += " " + text
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func remove(named name: String) {
        lines.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// The value for a name, compared case-insensitively; for a repeated name, the values joined
    /// in order; `nil` when there is none. Setting a value replaces every field of the name;
    /// `nil` removes them. For `Set-Cookie`, whose values may contain commas, use `values(named:)`.
    public subscript(name: String) -> String? {
        get {
            var joined: String?
            for line in lines where line.name.equalsIgnoringASCIICase(name) {
                joined = joined.map { $0 + Self.separator(forName: name) + line.value } ?? line.value
            }
            return joined
        }
        set {
            if let newValue { append(Header(name: name, value: newValue)) } else { remove(named: name) }
        }
    }

    /// The value of each field with this name (case-insensitive), one per field line, in order.
    public func values(named name: String) -> [String] {
        lines.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
    }

    /// The value of the first field with this name (case-insensitive).
    public func first(named name: String) -> String? {
        lines.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Whether a field with this name (case-insensitive) is present.
    public func contains(named name: String) -> Bool {
        lines.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// One entry per name (first spelling of the name kept), repeated values joined as the
    /// subscript joins them: what `URLRequest.allHTTPHeaderFields` and `HTTPURLResponse` hold.
    public var combined: [String: String] {
        // Linear in the number of fields: a hostile head may carry thousands.
        var combined = [String: String](minimumCapacity: lines.count)
        var spellingOf: [String: String] = [:]
        for line in lines {
            let key = line.name.lowercased()
            if let spelling = spellingOf[key] {
                combined[spelling, default: ""] += Self.separator(forName: spelling) + line.value
            } else {
                spellingOf[key] = line.name
                combined[line.name] = line.value
            }
        }
        return combined
    }

    /// The fields, one per line, values masked as `Header.description` masks them.
    public var description: String { lines.map(\.description).joined(separator: "\n") }

    private static func separator(forName name: String) -> String {
        name.equalsIgnoringASCIICase("Cookie") ? "; " : ", "
    }
}

extension String {
    /// ASCII case-insensitive equality, the comparison HTTP uses for field names.
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7A)
        }
    }
}
