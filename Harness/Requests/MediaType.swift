import Foundation

/// A media type from a file name extension, for multipart file parts.
enum MediaType {
    private static let byExtension: [String: String] = [
        "txt": "text/plain", "json": "application/json", "html": "text/html", "csv": "text/csv", "xml": "application/xml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "pdf": "application/pdf",
    ]

    static func guess(for file: URL) -> String {
        byExtension[file.pathExtension.lowercased()] ?? "application/octet-stream"
    }
}
