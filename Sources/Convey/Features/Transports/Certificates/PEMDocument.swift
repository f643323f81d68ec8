import Foundation

/// The blocks of a PEM file (RFC 7468): `-----BEGIN LABEL-----`, base64, `-----END LABEL-----`,
/// with any text between blocks (OpenSSL writes a readable dump before a certificate) ignored.
struct PEMDocument: Sendable {
    /// One block: its label and the DER bytes its base64 holds.
    struct Block: Sendable, Hashable {
        let label: String
        let der: [UInt8]
        /// The block's first line, counted from 1, for messages.
        let line: Int
        /// Whether RFC 1421 headers say the block is encrypted (`Proc-Type: 4,ENCRYPTED`).
        let isEncrypted: Bool
    }

    let blocks: [Block]

    /// Whether `bytes` look like PEM: they contain a `-----BEGIN ` line.
    static func looksLikePEM(_ bytes: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN ".utf8)
        guard bytes.count >= marker.count else { return false }
        return (0...(bytes.count - marker.count)).contains { bytes[$0..<$0 + marker.count].elementsEqual(marker) }
    }

    /// Reads every block; a block left open, an END that does not match its BEGIN or base64 that
    /// does not decode is a `CertificateError` naming the line.
    init(_ bytes: [UInt8]) throws(CertificateError) {
        let text = String(decoding: bytes, as: UTF8.self)
        var blocks: [Block] = []
        var open: (label: String, line: Int, body: String, headers: [String], inHeaders: Bool)?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            let number = index + 1
            if let label = Self.label(of: line, marker: "BEGIN") {
                guard open == nil else { throw CertificateError("a BEGIN line comes before the block above it ends", in: "line \(number)") }
                open = (label, number, "", [], true)
            } else if let label = Self.label(of: line, marker: "END") {
                guard let block = open else { throw CertificateError("an END line has no BEGIN line", in: "line \(number)") }
                guard label == block.label else {
                    throw CertificateError("the block that began as \(block.label) ends as \(label)", in: "line \(number)")
                }
                guard let der = Data(base64Encoded: block.body), !der.isEmpty else {
                    throw CertificateError("the \(block.label) block is not valid base64", in: "line \(block.line)")
                }
                let encrypted = block.headers.contains { $0.hasPrefix("Proc-Type:") && $0.contains("ENCRYPTED") }
                blocks.append(Block(label: block.label, der: Array(der), line: block.line, isEncrypted: encrypted))
                open = nil
            } else if var block = open {
                if block.inHeaders, line.contains(":") {
                    block.headers.append(line)
                } else if !line.isEmpty {
                    block.inHeaders = false
                    block.body += line
                }
                open = block
            }
        }
        if let block = open { throw CertificateError("the \(block.label) block never ends", in: "line \(block.line)") }
        self.blocks = blocks
    }

    /// The label of a `-----BEGIN LABEL-----` (or END) line, or `nil` for another line.
    private static func label(of line: String, marker: String) -> String? {
        let prefix = "-----\(marker) ", suffix = "-----"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix), line.count > prefix.count + suffix.count else { return nil }
        return String(line.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
