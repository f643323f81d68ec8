/// Response header fields exactly as they came: in order, each field line kept apart, names as sent.
///
/// Repeated fields stay separate (two `Age` lines, every `Set-Cookie`), so nothing is lost by
/// joining values that contain commas. `subscript(name)` gives the combined value RFC 9110 §5.3
/// describes (the values joined with `", "`); `values(named:)` gives each line's value.
public struct HeaderFields: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// The field lines, in the order received.
    public private(set) var fields: [Header]

    /// No fields.
    public init() { fields = [] }

    /// Fields in this order, repeats kept.
    public init(_ fields: some Sequence<Header>) { self.fields = Array(fields) }

    /// Fields from `[name: value]` pairs, sorted by name (a dictionary has no order).
    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { Header(name: $0.key, value: $0.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Header(name: $0.0, value: $0.1) }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> Header { fields[position] }

    /// The combined value of every field with this name (case-insensitive), joined with `", "`
    /// in order; `nil` when there is none. For `Set-Cookie`, whose values may contain commas,
    /// use `values(named:)`.
    public subscript(name: String) -> String? {
        var combined: String?
        for field in fields where field.name.equalsIgnoringASCIICase(name) {
            combined = combined.map { $0 + ", " + field.value } ?? field.value
        }
        return combined
    }

    /// The value of each field with this name (case-insensitive), one per field line, in order.
    public func values(named name: String) -> [String] {
        fields.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
    }

    /// The value of the first field with this name (case-insensitive).
    public func first(named name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Whether a field with this name (case-insensitive) is present.
    public func contains(named name: String) -> Bool {
        fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// Adds a field line after the others, keeping any with the same name.
    public mutating func append(_ field: Header) { fields.append(field) }

    /// Adds a field line after the others, keeping any with the same name.
    public mutating func append(name: String, value: String) { fields.append(Header(name: name, value: value)) }

    /// Appends a folded line's text to the last field's value (obsolete line folding, RFC 9112 §5.2).
    mutating func continueLastField(with text: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += " " + text
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func remove(named name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// One combined value per name (first spelling of the name kept), as `HTTPURLResponse` holds them.
    public var combined: [String: String] {
        // Linear in the number of fields: a hostile head may carry thousands.
        var combined = [String: String](minimumCapacity: fields.count)
        var spellingOf: [String: String] = [:]
        for field in fields {
            let key = field.name.lowercased()
            if let spelling = spellingOf[key] {
                combined[spelling, default: ""] += ", " + field.value
            } else {
                spellingOf[key] = field.name
                combined[field.name] = field.value
            }
        }
        return combined
    }

    public var description: String { fields.map(\.description).joined(separator: "\n") }
}
