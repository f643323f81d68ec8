import Foundation

/// Multipart boundaries (RFC 2046 §5.1.1): how they are made, and how content is checked for one.
enum MultipartBoundary {
    /// `convey-` and 32 random hex digits: 39 characters (RFC 2046 allows 70), all of them
    /// allowed unquoted in a `Content-Type` parameter.
    @Sendable
    static func random() -> String {
        "convey-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}

/// Finds a boundary in content that arrives in chunks, including one split across two chunks.
struct BoundaryScanner {
    private let boundary: Data
    /// The end of the content seen so far, one byte shorter than the boundary.
    private var tail = Data()

    init(boundary: String) {
        self.boundary = Data(boundary.utf8)
    }

    /// Whether the boundary occurs in the content up to and including `chunk`.
    mutating func occurs(in chunk: Data) -> Bool {
        let keep = max(0, boundary.count - 1)
        var seam = tail
        seam.append(chunk.prefix(keep))
        if seam.range(of: boundary) != nil || chunk.range(of: boundary) != nil { return true }
        tail = Data(chunk.count >= keep ? chunk.suffix(keep) : seam.suffix(keep))
        return false
    }
}
