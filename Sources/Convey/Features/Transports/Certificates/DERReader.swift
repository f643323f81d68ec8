/// Reads DER (ITU-T X.690), as much of it as certificates and keys need: one-byte tags and
/// definite lengths of up to four bytes. Every length is checked against the bytes that remain,
/// so a truncated or altered encoding is a `CertificateError` naming the byte, never a read past
/// the end.
struct DERReader {
    /// One element: its tag, its contents, and all of it as encoded (what a digest covers).
    struct Element {
        let tag: UInt8
        /// The content octets. Indices are offsets in the whole encoding being read.
        let contents: ArraySlice<UInt8>
        /// Tag, length and contents.
        let encoded: ArraySlice<UInt8>

        /// The offset of the element's first byte.
        var offset: Int { encoded.startIndex }

        /// A reader of the elements inside a constructed element (a SEQUENCE, an explicit tag).
        var reader: DERReader { DERReader(contents) }
    }

    /// The tags Convey's certificate code reads.
    enum Tag {
        static let boolean: UInt8 = 0x01
        static let integer: UInt8 = 0x02
        static let bitString: UInt8 = 0x03
        static let octetString: UInt8 = 0x04
        static let null: UInt8 = 0x05
        static let objectIdentifier: UInt8 = 0x06
        static let utf8String: UInt8 = 0x0C
        static let printableString: UInt8 = 0x13
        static let ia5String: UInt8 = 0x16
        static let sequence: UInt8 = 0x30
        static let set: UInt8 = 0x31

        /// `[n]` constructed, as an explicit tag or a constructed implicit one.
        static func context(_ number: UInt8) -> UInt8 { 0xA0 | number }
        /// `[n]` primitive, an implicitly tagged primitive value.
        static func contextPrimitive(_ number: UInt8) -> UInt8 { 0x80 | number }
    }

    private(set) var remaining: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    init(_ bytes: [UInt8]) {
        remaining = bytes[...]
    }

    var isAtEnd: Bool { remaining.isEmpty }

    /// The offset of the next byte to read.
    var offset: Int { remaining.startIndex }

    /// The tag of the next element, without reading it; `nil` at the end.
    var nextTag: UInt8? { remaining.first }

    /// Reads the next element, whatever its tag; `what` names it in errors.
    mutating func next(_ what: String) throws(CertificateError) -> Element {
        let start = remaining.startIndex
        guard let tag = remaining.first else { throw CertificateError("\(what) is missing: the data ends", at: start) }
        guard tag & 0x1F != 0x1F else { throw CertificateError("\(what) has a multi-byte tag, which no certificate field uses", at: start) }
        var index = remaining.index(after: start)
        guard index < remaining.endIndex else { throw CertificateError("\(what) is cut short after its tag", at: start) }
        let first = remaining[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count != 0 else { throw CertificateError("\(what) has an indefinite length, which DER forbids", at: start) }
            guard count <= 4 else { throw CertificateError("\(what) has a length of \(count) bytes, more than any certificate needs", at: start) }
            guard remaining.endIndex - index >= count else { throw CertificateError("\(what) is cut short in its length", at: start) }
            for byte in remaining[index..<index + count] { length = length << 8 | Int(byte) }
            index += count
            guard length >= 0x80, remaining[index - count] != 0 else {
                throw CertificateError("\(what) has a length in more bytes than needed, which DER forbids", at: start)
            }
        }
        guard remaining.endIndex - index >= length else {
            throw CertificateError("\(what) says it holds \(length) bytes, but only \(remaining.endIndex - index) follow", at: start)
        }
        let end = index + length
        let element = Element(tag: tag, contents: remaining[index..<end], encoded: remaining[start..<end])
        remaining = remaining[end...]
        return element
    }

    /// Reads the next element, which must have `tag`.
    mutating func next(_ tag: UInt8, _ what: String) throws(CertificateError) -> Element {
        let element = try next(what)
        guard element.tag == tag else {
            throw CertificateError("\(what) has tag 0x\(String(element.tag, radix: 16)) where 0x\(String(tag, radix: 16)) was expected", at: element.offset)
        }
        return element
    }

    /// Reads the next element when it has `tag`; `nil`, reading nothing, when another comes or none.
    mutating func nextIfPresent(_ tag: UInt8, _ what: String) throws(CertificateError) -> Element? {
        guard remaining.first == tag else { return nil }
        return try next(what)
    }

    /// Throws unless everything was read: trailing bytes in a structure are a fault.
    func expectEnd(of what: String) throws(CertificateError) {
        guard isAtEnd else {
            throw CertificateError("\(what) is followed by \(remaining.count) extra \(remaining.count == 1 ? "byte" : "bytes")", at: offset)
        }
    }
}

extension DERReader.Element {
    /// The bits of a BIT STRING whose length is a whole number of bytes (keys always are).
    func wholeBytesOfBitString(_ what: String) throws(CertificateError) -> ArraySlice<UInt8> {
        guard let unused = contents.first else { throw CertificateError("\(what) is an empty BIT STRING", at: offset) }
        guard unused == 0 else { throw CertificateError("\(what) does not hold whole bytes (\(unused) unused bits)", at: offset) }
        return contents.dropFirst()
    }

    /// The magnitude of a non-negative INTEGER, without the sign byte DER adds before a high bit.
    func unsignedInteger(_ what: String) throws(CertificateError) -> ArraySlice<UInt8> {
        guard let first = contents.first else { throw CertificateError("\(what) is an empty INTEGER", at: offset) }
        guard first & 0x80 == 0 else { throw CertificateError("\(what) is negative", at: offset) }
        if contents.count > 1, first == 0 {
            guard contents[contents.startIndex + 1] & 0x80 != 0 else {
                throw CertificateError("\(what) has a leading zero byte, which DER forbids", at: offset)
            }
            return contents.dropFirst()
        }
        return contents
    }
}
