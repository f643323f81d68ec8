import Foundation

/// JSON encoding of upload payloads, off the `ConveyActor`, with failures that name the place.
enum JSONBody {
    @concurrent
    static func encode<Payload: Encodable & Sendable>(_ payload: Payload, using encoder: JSONEncoder) async throws -> Data {
        do {
            return try encoder.encode(payload)
        } catch let error as EncodingError {
            let (path, reason): ([any CodingKey], String) = switch error {
            case .invalidValue(_, let context): (context.codingPath, context.debugDescription)
            @unknown default: ([], String(describing: error))
            }
            let place = path.map(\.stringValue).joined(separator: ".")
            throw ConveyError.upload(String(describing: Payload.self) + (place.isEmpty ? "" : " at \(place)"), reason)
        } catch {
            throw ConveyError.upload(String(describing: Payload.self), String(describing: error))
        }
    }
}
