import Foundation

/// The envelope of the outbox's two kinds of file: an item's request (`ID.item`) and its state
/// (`ID.state`). Every file proves itself: a reader checks the magic, the version, both lengths
/// against the file's size (with an overflow check, so crafted lengths are a damaged file, never a
/// trap or a huge allocation) and an XXH64 checksum of each part, so a torn, truncated or
/// corrupted file is detected and set aside, never sent.
///
/// ```
/// offset  size  field
///      0     4  magic: "CVYO" (an item's request) or "CVYS" (an item's state)
///      4     2  format version (1), little-endian like every number here
///      6     2  reserved, 0
///      8     4  record length R (at most 1 MiB)
///     12     4  reserved, 0
///     16     8  bytes length B
///     24     8  XXH64 (seed 0) of the record
///     32     8  XXH64 (seed 0) of the bytes
///     40     R  the record: JSON (`StoredRequest` or `StoredState`)
///   40+R     B  the bytes: the request body, or the response body a state keeps
/// ```
enum OutboxFileFormat {
    static let requestMagic: [UInt8] = Array("CVYO".utf8)
    static let stateMagic: [UInt8] = Array("CVYS".utf8)
    static let version: UInt16 = 1
    static let headerSize = 40
    /// The largest record a file may announce: records are small JSON objects.
    static let maximumRecordSize = 1 << 20

    /// A file's two parts, checked.
    struct Parts {
        let record: Data
        let bytes: Data
    }

    /// The bytes of a file holding `record` and `bytes`.
    static func encode(magic: [UInt8], record: Data, bytes: Data) -> [UInt8] {
        var file: [UInt8] = []
        file.reserveCapacity(headerSize + record.count + bytes.count)
        file += magic
        append(version, to: &file)
        append(UInt16(0), to: &file)
        append(UInt32(record.count), to: &file)
        append(UInt32(0), to: &file)
        append(UInt64(bytes.count), to: &file)
        append(record.withUnsafeBytes { XXH64.hash($0) }, to: &file)
        append(bytes.withUnsafeBytes { XXH64.hash($0) }, to: &file)
        file += record
        file += bytes
        return file
    }

    /// The header's announced lengths, checked against `fileSize`; throws a reason when they
    /// do not describe a sound file of this kind.
    static func lengths(ofHeader header: [UInt8], magic: [UInt8], fileSize: Int64) throws(OutboxDamage) -> (record: Int, bytes: Int64) {
        guard header.count >= headerSize else { throw OutboxDamage("it is \(fileSize) bytes long, shorter than its \(headerSize)-byte header") }
        guard header[0..<4].elementsEqual(magic) else { throw OutboxDamage("it does not start with the outbox's magic bytes") }
        guard number(UInt16.self, in: header, at: 4) == version else { throw OutboxDamage("its format version is not \(version)") }
        let recordLength = UInt64(number(UInt32.self, in: header, at: 8))
        let bytesLength = number(UInt64.self, in: header, at: 16)
        guard recordLength <= UInt64(maximumRecordSize) else { throw OutboxDamage("it announces a \(recordLength)-byte record, more than the \(maximumRecordSize) allowed") }
        let (expected, overflowed) = (UInt64(headerSize) + recordLength).addingReportingOverflow(bytesLength)
        guard !overflowed, expected == UInt64(max(fileSize, 0)) else {
            throw OutboxDamage("its header announces \(overflowed ? "more bytes than a file can hold" : "\(expected) bytes") but it holds \(fileSize)")
        }
        return (Int(recordLength), Int64(bytesLength))
    }

    /// The record of a file whose header and record bytes are given, checked against its checksum.
    static func record(in prefix: [UInt8]) throws(OutboxDamage) -> Data {
        let length = Int(number(UInt32.self, in: prefix, at: 8))
        guard prefix.count >= headerSize + length else { throw OutboxDamage("it was cut short") }
        let record = Data(prefix[headerSize..<headerSize + length])
        guard record.withUnsafeBytes({ XXH64.hash($0) }) == number(UInt64.self, in: prefix, at: 24) else {
            throw OutboxDamage("its record does not match its checksum")
        }
        return record
    }

    /// The bytes part of a whole file, checked against its checksum.
    static func bytes(in file: [UInt8]) throws(OutboxDamage) -> Data {
        let start = headerSize + Int(number(UInt32.self, in: file, at: 8))
        guard file.count >= start else { throw OutboxDamage("it was cut short") }
        let bytes = file.withUnsafeBytes { Data(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        guard bytes.withUnsafeBytes({ XXH64.hash($0) }) == number(UInt64.self, in: file, at: 32) else {
            throw OutboxDamage("its body does not match its checksum")
        }
        return bytes
    }

    /// Both parts of a whole file, checked.
    static func decode(_ file: [UInt8], magic: [UInt8]) throws(OutboxDamage) -> Parts {
        _ = try lengths(ofHeader: Array(file.prefix(headerSize)), magic: magic, fileSize: Int64(file.count))
        return Parts(record: try record(in: file), bytes: try bytes(in: file))
    }

    private static func append<Number: FixedWidthInteger>(_ number: Number, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
    }

    private static func number<Number: FixedWidthInteger>(_ type: Number.Type, in bytes: [UInt8], at offset: Int) -> Number {
        bytes.withUnsafeBytes { Number(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: Number.self)) }
    }
}

/// Why a file in the outbox's folder is not a sound item: the reason it is set aside with; or,
/// when `isUnavailable`, why it cannot be read for now (its data is protected and the device is
/// locked), which is no damage: the item stays as it is.
struct OutboxDamage: Error, Sendable, CustomStringConvertible {
    let reason: String
    /// Whether the file's data is unavailable for now (`ProtectedData`) rather than damaged.
    let isUnavailable: Bool
    init(_ reason: String, unavailable: Bool = false) {
        self.reason = reason
        isUnavailable = unavailable
    }
    var description: String { reason }
}
