import Foundation

/// The on-disk format of one cache entry. Every file proves itself: a reader checks the magic,
/// the version, the lengths against the file size, an XXH64 checksum over everything after the
/// header, and the full key, so a torn write, a truncated or corrupted file, or two keys whose
/// names collide are detected, dropped and fetched again, never served.
///
/// ```
/// offset  size  field
///      0     4  magic "CVYC"
///      4     2  format version (1), little-endian like every number here
///      6     2  reserved, 0
///      8     4  key length K
///     12     4  metadata length M
///     16     8  body length B
///     24     8  XXH64 (seed 0) of bytes 32 ..< 32+K+M+B
///     32     K  key, UTF-8
///   32+K     M  metadata: status u16, requested-at f64, received-at f64,
///               header count u32 + (name, value) strings in the order received, repeats kept, vary count u32 + (name, present u8, value) strings,
///               credential partition tag: present u8 + string; a string is u32 length + UTF-8
/// 32+K+M     B  body
/// ```
enum CacheEntryFormat {
    static let magic: [UInt8] = Array("CVYC".utf8)
    static let version: UInt16 = 1
    static let headerSize = 32

    /// What reading a file found.
    enum Decoded {
        /// A sound entry for the expected key.
        case entry(CachedResponse)
        /// A sound entry for another key whose file name collides with this one.
        case otherKey
        /// Not a sound entry; the reason says what failed.
        case corrupt(String)
    }

    /// The bytes of a file holding `entry`.
    static func encode(_ entry: CachedResponse) -> [UInt8] {
        var metadata = ByteWriter()
        metadata.append(UInt16(clamping: entry.statusCode))
        metadata.append(entry.requestedAt.timeIntervalSince1970.bitPattern)
        metadata.append(entry.receivedAt.timeIntervalSince1970.bitPattern)
        metadata.append(UInt32(entry.fields.count))
        for field in entry.fields {
            metadata.append(string: field.name)
            metadata.append(string: field.value)
        }
        metadata.append(UInt32(entry.varyingRequestHeaders.count))
        for varying in entry.varyingRequestHeaders {
            metadata.append(string: varying.name)
            metadata.append(UInt8(varying.value == nil ? 0 : 1))
            metadata.append(string: varying.value ?? "")
        }
        metadata.append(UInt8(entry.credentialPartition == nil ? 0 : 1))
        metadata.append(string: entry.credentialPartition ?? "")

        let key = Array(entry.key.utf8)
        var file = ByteWriter()
        file.bytes.reserveCapacity(headerSize + key.count + metadata.bytes.count + entry.body.count)
        file.bytes += magic
        file.append(version)
        file.append(UInt16(0))
        file.append(UInt32(key.count))
        file.append(UInt32(metadata.bytes.count))
        file.append(UInt64(entry.body.count))
        file.append(UInt64(0))
        file.bytes += key
        file.bytes += metadata.bytes
        file.bytes += entry.body
        let checksum = file.bytes.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[headerSize...])) }
        withUnsafeBytes(of: checksum.littleEndian) { file.bytes.replaceSubrange(24..<32, with: $0) }
        return file.bytes
    }

    /// The entry in `bytes`, checked against `expectedKey` (any key when `nil`).
    static func decode(_ bytes: UnsafeRawBufferPointer, expectedKey: String?) -> Decoded {
        var header = ByteReader(bytes)
        guard bytes.count >= headerSize, let fileMagic = header.bytes(4), fileMagic.elementsEqual(magic) else { return .corrupt("not a Convey cache file") }
        guard header.read(UInt16.self) == version, header.read(UInt16.self) == 0,
              let keyLength = header.read(UInt32.self), let metadataLength = header.read(UInt32.self),
              let bodyLength = header.read(UInt64.self), let checksum = header.read(UInt64.self)
        else { return .corrupt("unknown format version") }
        // The lengths come from the file, which may have been crafted: the body length is added
        // with an overflow check (all ones is a corrupt file, not a trap); two 32-bit lengths cannot overflow.
        let fixedPart = UInt64(headerSize) + UInt64(keyLength) + UInt64(metadataLength)
        let (expectedSize, overflowed) = fixedPart.addingReportingOverflow(bodyLength)
        guard !overflowed else { return .corrupt("its header announces more bytes than a file can hold") }
        guard expectedSize == UInt64(bytes.count) else { return .corrupt("size \(bytes.count) does not match its header (\(expectedSize))") }
        guard XXH64.hash(UnsafeRawBufferPointer(rebasing: bytes[headerSize...])) == checksum else { return .corrupt("checksum mismatch") }

        let keyStart = headerSize, metadataStart = keyStart + Int(keyLength), bodyStart = metadataStart + Int(metadataLength)
        let key = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<metadataStart]), as: UTF8.self)
        guard expectedKey == nil || key == expectedKey else { return .otherKey }
        var metadata = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[metadataStart..<bodyStart]))
        guard let entry = decodeEntry(key: key, metadata: &metadata, body: Data(UnsafeRawBufferPointer(rebasing: bytes[bodyStart...]))),
              metadata.isAtEnd
        else { return .corrupt("unreadable metadata") }
        return .entry(entry)
    }

    private static func decodeEntry(key: String, metadata: inout ByteReader, body: Data) -> CachedResponse? {
        guard let status = metadata.read(UInt16.self), (100..<600).contains(Int(status)),
              let requestedBits = metadata.read(UInt64.self), let receivedBits = metadata.read(UInt64.self),
              let headerCount = metadata.read(UInt32.self)
        else { return nil }
        let requestedAt = Double(bitPattern: requestedBits), receivedAt = Double(bitPattern: receivedBits)
        guard requestedAt.isFinite, receivedAt.isFinite else { return nil }
        var fields = Headers()
        for _ in 0..<headerCount {
            guard let name = metadata.string(), let value = metadata.string() else { return nil }
            fields.appendLine(Header(name: name, value: value))
        }
        guard let varyCount = metadata.read(UInt32.self) else { return nil }
        var varying: [CachedResponse.VaryingHeader] = []
        for _ in 0..<varyCount {
            guard let name = metadata.string(), let present = metadata.read(UInt8.self), let value = metadata.string() else { return nil }
            varying.append(.init(name: name, value: present == 0 ? nil : value))
        }
        guard let hasFingerprint = metadata.read(UInt8.self), let fingerprint = metadata.string() else { return nil }
        return CachedResponse(key: key, statusCode: Int(status), fields: fields, body: body,
                              requestedAt: Date(timeIntervalSince1970: requestedAt), receivedAt: Date(timeIntervalSince1970: receivedAt),
                              varyingRequestHeaders: varying, credentialPartition: hasFingerprint == 0 ? nil : fingerprint)
    }
}

/// Appends little-endian numbers and length-prefixed strings.
private struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func append<Number: FixedWidthInteger>(_ number: Number) {
        withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
    }

    mutating func append(string: String) {
        let utf8 = Array(string.utf8)
        append(UInt32(utf8.count))
        bytes += utf8
    }
}

/// Reads what `ByteWriter` wrote; every read checks the bounds and returns `nil` past the end.
private struct ByteReader {
    private let buffer: UnsafeRawBufferPointer
    private var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset == buffer.count }

    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= buffer.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    mutating func read<Number: FixedWidthInteger>(_ type: Number.Type) -> Number? {
        guard let raw = bytes(MemoryLayout<Number>.size) else { return nil }
        return Number(littleEndian: raw.loadUnaligned(as: Number.self))
    }

    mutating func string() -> String? {
        // `Int(exactly:)`: a crafted length of 2³¹ or more does not fit a 32-bit `Int` (watchOS).
        guard let length = read(UInt32.self), let count = Int(exactly: length), let raw = bytes(count) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }
}
