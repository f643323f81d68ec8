import Foundation

/// What a step around the run changed in the request it was given, so that every later attempt,
/// whose request is built afresh (the credentials and the body read again), gets the same
/// changes: the method, the URL, the body, and the values of each field the step set, replaced
/// or removed.
struct RequestChanges: Sendable {
    private var method: HTTPMethod?
    private var url: URL?
    private var body: Data??
    /// Each field name whose values changed, with its values after the change (none: removed).
    private var fields: [(name: String, values: [String])] = []

    /// The changes that make `changed` out of `original`.
    init(from original: OutgoingRequest, to changed: OutgoingRequest) {
        guard original != changed else { return }
        if changed.method != original.method { method = changed.method }
        if changed.url != original.url { url = changed.url }
        if changed.body != original.body { body = .some(changed.body) }
        var names: [String] = []
        for field in Array(original.fields) + Array(changed.fields) where !names.contains(where: { $0.caseInsensitiveCompare(field.name) == .orderedSame }) {
            names.append(field.name)
        }
        for name in names {
            let values = changed.fields.values(named: name)
            if values != original.fields.values(named: name) { fields.append((name, values)) }
        }
    }

    /// Whether the step changed nothing.
    var isEmpty: Bool { method == nil && url == nil && body == nil && fields.isEmpty }

    /// Makes the same changes to `request`.
    func apply(to request: inout OutgoingRequest) {
        if let method { request.method = method }
        if let url { request.url = url }
        if let body { request.body = body }
        for (name, values) in fields {
            request.fields.remove(named: name)
            for value in values { request.fields.add(Header(name: name, value: value)) }
        }
    }
}
