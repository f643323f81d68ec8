import Foundation

/// A request body taken apart the way httpbin reports it: `form` fields, `files`, `json`, and the
/// raw `data` for anything that is neither form nor multipart.
struct EchoedBody {
    var data = ""
    var form: [String: String] = [:]
    var files: [String: String] = [:]
    var json: Any?

    init(_ body: Data, contentType: String?) {
        let type = contentType?.lowercased() ?? ""
        if type.hasPrefix("application/x-www-form-urlencoded") {
            form = Self.formFields(String(decoding: body, as: UTF8.self))
        } else if type.hasPrefix("multipart/form-data"), let boundary = Self.boundary(in: contentType ?? "") {
            for part in Self.parts(of: body, boundary: boundary) {
                if let filename = part.filename {
                    files[part.name] = Self.fileValue(part.content, mimeType: part.mimeType, filename: filename)
                } else {
                    form[part.name] = String(decoding: part.content, as: UTF8.self)
                }
            }
        } else {
            data = String(data: body, encoding: .utf8) ?? "data:application/octet-stream;base64," + body.base64EncodedString()
            json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        }
    }

    /// A file's text when it is UTF-8, else a data URL of its bytes, as httpbin reports it.
    private static func fileValue(_ content: Data, mimeType: String, filename: String) -> String {
        String(data: content, encoding: .utf8) ?? "data:\(mimeType);base64,\(content.base64EncodedString())"
    }

    private static func formFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    private static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" { return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return nil
    }

    private struct Part {
        var name = ""
        var filename: String?
        var mimeType = "application/octet-stream"
        var content = Data()
    }

    /// The parts between `--boundary` lines, each with its headers and bytes.
    private static func parts(of body: Data, boundary: String) -> [Part] {
        let delimiter = Data("--\(boundary)".utf8)
        var pieces: [Data] = []
        var searchStart = body.startIndex
        var previous: Data.Index?
        while let found = body.range(of: delimiter, in: searchStart..<body.endIndex) {
            if let previous { pieces.append(body[previous..<found.lowerBound]) }
            previous = found.upperBound
            searchStart = found.upperBound
        }
        return pieces.compactMap { piece in
            let separator = Data("\r\n\r\n".utf8)
            guard let split = piece.range(of: separator) else { return nil }
            var part = Part()
            for line in String(decoding: piece[piece.startIndex..<split.lowerBound], as: UTF8.self).split(separator: "\r\n") {
                let lowered = line.lowercased()
                if lowered.hasPrefix("content-disposition:") {
                    part.name = parameter("name", in: String(line)) ?? ""
                    part.filename = parameter("filename", in: String(line))
                } else if lowered.hasPrefix("content-type:") {
                    part.mimeType = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            var content = piece[split.upperBound...]
            if content.suffix(2) == Data("\r\n".utf8) { content = content.dropLast(2) }
            part.content = Data(content)
            return part
        }
    }

    /// `name="value"` from a header line.
    private static func parameter(_ name: String, in line: String) -> String? {
        guard let range = line.range(of: "; \(name)=\"") ?? line.range(of: ";\(name)=\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
