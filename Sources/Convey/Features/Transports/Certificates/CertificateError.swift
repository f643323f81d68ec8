/// Why a certificate, a key or a file of them could not be read: what is wrong, in which file or
/// certificate, and at which byte of its DER encoding. Malformed input is always this error,
/// never a crash.
@_spi(Tools) public struct CertificateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was being read: a file's path, or a certificate of a chain ("certificate 2 of the chain").
    public var source: String
    /// The byte offset in the DER encoding where the fault is, when there is one.
    public var offset: Int?
    /// What is wrong, in words.
    public var reason: String

    init(_ reason: String, at offset: Int? = nil, in source: String = "the data") {
        self.source = source
        self.offset = offset
        self.reason = reason
    }

    /// The same fault, in `source`.
    func within(_ source: String) -> CertificateError {
        CertificateError(reason, at: offset, in: source)
    }

    /// `source: reason (at byte N)`.
    public var description: String {
        "\(source): \(reason)" + (offset.map { " (at byte \($0))" } ?? "")
    }
}
