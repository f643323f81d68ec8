import Foundation

/// Turns a response body into a task's payload type, in the run's own task: never on
/// `@ConveyActor`, so large bodies from many runs decode on every core at once.
enum PayloadDecoding {
    /// The payload for a body that needs no decoding (`Data`), or `nil`.
    static func passThrough<Payload>(_ type: Payload.Type, _ data: Data) -> Payload? {
        data as? Payload
    }

    /// Decodes `data` as `type`: raw bytes pass through, `String` is read
    /// as UTF-8, anything else is JSON. Failures become `ConveyError.decodingFailed`.
    static func decode<Payload: Decodable>(_ type: Payload.Type, from data: Data, using decoder: JSONDecoder, url: URL?) throws -> Payload {
        if let payload = passThrough(type, data) { return payload }
        if type == String.self, let text = String(data: data, encoding: .utf8) as? Payload { return text }
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw failure(error, type: type, data: data, url: url)
        } catch {
            throw ConveyError.decodingFailed(
                typeName: String(describing: type), codingPath: "", reason: String(describing: error),
                bodyPrefix: prefix(of: data), url: url)
        }
    }

    private static func failure(_ error: DecodingError, type: Any.Type, data: Data, url: URL?) -> ConveyError {
        let (path, reason): ([any CodingKey], String) = switch error {
        case .keyNotFound(let key, let context):
            (context.codingPath + [key], "the key \"\(key.stringValue)\" is missing")
        case .valueNotFound(let expected, let context):
            (context.codingPath, "expected \(expected) but found null")
        case .typeMismatch(let expected, let context):
            (context.codingPath, "expected \(expected): \(context.debugDescription)")
        case .dataCorrupted(let context):
            (context.codingPath, data.isEmpty ? "the body is empty" : context.debugDescription)
        @unknown default:
            ([], String(describing: error))
        }
        return .decodingFailed(typeName: String(describing: type), codingPath: render(path), reason: reason,
                               bodyPrefix: prefix(of: data), url: url)
    }

    /// `users[2].email` from the coding keys.
    private static func render(_ path: [any CodingKey]) -> String {
        path.reduce(into: "") { result, key in
            if let index = key.intValue { result += "[\(index)]" } else { result += (result.isEmpty ? "" : ".") + key.stringValue }
        }
    }

    private static func prefix(of data: Data) -> String {
        guard !data.isEmpty else { return "(empty)" }
        // Masked before it is cut, so that a cut never leaves part of a secret behind.
        return String(Redaction.standard.maskedText(String(decoding: data.prefix(4096), as: UTF8.self)).prefix(512))
    }
}
