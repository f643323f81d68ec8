import Foundation

/// Whether a fixture's request body answers a request's, for entries that share method and URL:
/// the same bytes; or the same JSON value (key order and spacing aside, as a masked export
/// pretty-prints JSON it masked); or the same form fields in any order. A masked value
/// (`‹redacted›`) in the fixture stands for any value.
enum HARBodyMatch {
    /// The largest body compared as JSON or form fields; larger ones compare byte for byte.
    static let structuredLimit = 4 << 20

    static func answers(fixture: Data?, request: Data?, contentType: String?) -> Bool {
        let fixture = fixture ?? Data()
        let request = request ?? Data()
        if fixture == request { return true }
        guard fixture.count <= structuredLimit, request.count <= structuredLimit else { return false }
        if let expected = try? JSONSerialization.jsonObject(with: fixture, options: [.fragmentsAllowed]),
           let actual = try? JSONSerialization.jsonObject(with: request, options: [.fragmentsAllowed]) {
            return jsonAnswers(expected, actual)
        }
        if contentType?.lowercased().contains("x-www-form-urlencoded") == true,
           let expected = String(data: fixture, encoding: .utf8), let actual = String(data: request, encoding: .utf8) {
            return HARRequestKey.answers(expected: HARRequestKey.parameters(Array(expected.utf8)[...]),
                                         actual: HARRequestKey.parameters(Array(actual.utf8)[...]))
        }
        return false
    }

    /// JSON values equal, with `Redaction.mask` in `expected` matching anything.
    private static func jsonAnswers(_ expected: Any, _ actual: Any) -> Bool {
        if let text = expected as? String, text == Redaction.mask { return true }
        switch (expected, actual) {
        case let (expected as [String: Any], actual as [String: Any]):
            return expected.count == actual.count && expected.allSatisfy { key, value in actual[key].map { jsonAnswers(value, $0) } ?? false }
        case let (expected as [Any], actual as [Any]):
            return expected.count == actual.count && zip(expected, actual).allSatisfy(jsonAnswers)
        case let (expected as String, actual as String):
            return expected == actual
        case let (expected as NSNumber, actual as NSNumber):
            return expected == actual
        case (is NSNull, is NSNull):
            return true
        default:
            return false
        }
    }
}
