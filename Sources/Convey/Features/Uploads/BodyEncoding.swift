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

/// `application/x-www-form-urlencoded` serialization, as the WHATWG URL standard defines it.
enum FormEncoding {
    /// `name=value&…`, sorted by name; space becomes `+`, and every byte outside
    /// `A–Z a–z 0–9 * - . _` becomes `%XX` of its UTF-8 encoding.
    static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }
            .map { component($0.key) + "=" + component($0.value) }
            .joined(separator: "&")
    }

    static func component(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"),
                 UInt8(ascii: "."), UInt8(ascii: "_"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                result += "+"
            default:
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension ConveyError {
    /// An `encodingFailed` error for an upload body: what could not be produced (a payload, a
    /// part, a file, the staged body), and why.
    static func upload(_ subject: String, _ reason: String) -> ConveyError {
        .encodingFailed(subject: subject, reason: reason)
    }
}
