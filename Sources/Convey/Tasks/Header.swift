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
    public var description: String { "\(name): \(Redaction.standard.maskedHeaders([name: value])[name] ?? value)" }
}

/// Request header fields in order, names compared case-insensitively.
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
/// Repeated fields go out as one line, their values joined with `", "` as RFC 9110 §5.3
/// allows (`Cookie` values with `"; "`, as RFC 6265 asks).
public struct Headers: Sendable, Hashable, Sequence, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    private var fields: [Header] = []

    /// An empty set of headers.
    public init() {}

    /// Headers from fields in order; a later field replaces an earlier one of the same name.
    public init(_ fields: some Sequence<Header>) {
        for field in fields { append(field) }
    }

    /// Headers from `[name: value]` pairs; dictionary order is not kept, so names are sorted.
    public init(_ dictionary: [String: String]) {
        self.init(dictionary.sorted { $0.key < $1.key }.map { Header(name: $0.key, value: $0.value) })
    }

    public init(arrayLiteral elements: Header...) { self.init(elements) }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Header(name: $0.0, value: $0.1) })
    }

    /// Sets a field: it replaces every field with the same name (case-insensitive), in the
    /// place of the first, or goes last when the name is new.
    public mutating func append(_ header: Header) {
        guard let first = index(of: header.name) else {
            fields.append(header)
            return
        }
        fields[first] = header
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if fields[index].name.equalsIgnoringASCIICase(header.name) { fields.remove(at: index) } else { index += 1 }
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
    public mutating func add(_ header: Header) {
        if let last = fields.lastIndex(where: { $0.name.equalsIgnoringASCIICase(header.name) }) {
            fields.insert(header, at: fields.index(after: last))
        } else {
            fields.append(header)
        }
    }

    /// Removes every field with this name.
    public mutating func remove(named name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// The value for a name, compared case-insensitively; for a repeated name, the values joined
    /// as they go out. Setting a value replaces every field of the name; `nil` removes them.
    public subscript(name: String) -> String? {
        get {
            let values = values(named: name)
            return values.isEmpty ? nil : values.joined(separator: Self.separator(forName: name))
        }
        set {
            if let newValue { append(Header(name: name, value: newValue)) } else { remove(named: name) }
        }
    }

    /// The value of each field with this name (case-insensitive), in order.
    public func values(named name: String) -> [String] {
        fields.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
    }

    /// One entry per name (first spelling kept), repeated values joined, for
    /// `URLRequest.allHTTPHeaderFields`.
    public var dictionary: [String: String] {
        var result: [String: String] = [:]
        var spelling: [String: String] = [:]
        for field in fields {
            let key = field.name.lowercased()
            if let name = spelling[key], let earlier = result[name] {
                result[name] = earlier + Self.separator(forName: name) + field.value
            } else {
                spelling[key] = field.name
                result[field.name] = field.value
            }
        }
        return result
    }

    /// The number of fields, repeats counted.
    public var count: Int { fields.count }
    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Header]> { fields.makeIterator() }

    public var description: String { fields.map(\.description).joined(separator: "\n") }

    private func index(of name: String) -> Int? {
        fields.firstIndex { $0.name.equalsIgnoringASCIICase(name) }
    }

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
