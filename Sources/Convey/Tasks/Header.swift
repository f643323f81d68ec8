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

    public var description: String { "\(name): \(value)" }
}

/// An ordered set of header fields in which each name appears once, compared case-insensitively.
///
/// Adding a field whose name is already present replaces that field's value, so layered
/// headers (defaults, then server, then task) never send a name twice: the last layer wins.
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

    /// Adds a field, or replaces the value of the field with the same name (case-insensitive).
    public mutating func append(_ header: Header) {
        if let index = index(of: header.name) {
            fields[index] = header
        } else {
            fields.append(header)
        }
    }

    /// Adds or replaces each field in order.
    public mutating func append(contentsOf headers: some Sequence<Header>) {
        for header in headers { append(header) }
    }

    /// Removes the field with this name, if present.
    public mutating func remove(named name: String) {
        if let index = index(of: name) { fields.remove(at: index) }
    }

    /// The value for a name, compared case-insensitively; setting `nil` removes the field.
    public subscript(name: String) -> String? {
        get { index(of: name).map { fields[$0].value } }
        set {
            if let newValue { append(Header(name: name, value: newValue)) } else { remove(named: name) }
        }
    }

    /// The fields as a dictionary, for `URLRequest.allHTTPHeaderFields`.
    public var dictionary: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The number of fields.
    public var count: Int { fields.count }
    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Header]> { fields.makeIterator() }

    public var description: String { fields.map(\.description).joined(separator: "\n") }

    private func index(of name: String) -> Int? {
        fields.firstIndex { $0.name.equalsIgnoringASCIICase(name) }
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
