import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Cache entry format")
struct CacheEntryFormatTests {
    private let sample = CachedResponse(
        key: "https://example.com/a?b=1", statusCode: 203, fields: ["ETag": "\"v1\"", "Cache-Control": "max-age=60", "X-Ünïcode": "✓"],
        body: Data((0..<300).map { UInt8($0 % 256) }), requestedAt: Date(timeIntervalSince1970: 1_700_000_000.25),
        receivedAt: Date(timeIntervalSince1970: 1_700_000_001.5),
        varyingRequestHeaders: [.init(name: "accept", value: "application/json"), .init(name: "x-absent", value: nil)],
        credentialPartition: SHA256.hexDigest("Bearer x"))

    @Test func anEntryRoundTripsThroughItsBytes() throws {
        let bytes = CacheEntryFormat.encode(sample)
        guard case .entry(let decoded) = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: sample.key) }) else {
            Issue.record("the encoded entry did not decode")
            return
        }
        #expect(decoded.key == sample.key)
        #expect(decoded.statusCode == 203)
        #expect(decoded.headers == sample.headers)
        #expect(decoded.body == sample.body)
        #expect(decoded.requestedAt == sample.requestedAt)
        #expect(decoded.receivedAt == sample.receivedAt)
        #expect(decoded.varyingRequestHeaders == sample.varyingRequestHeaders)
        #expect(decoded.credentialPartition == sample.credentialPartition)
        #expect(decoded.eTag == "\"v1\"")
        #expect(decoded.freshnessLifetime == 60)
    }

    @Test func everySingleFlippedByteIsDetected() {
        let bytes = CacheEntryFormat.encode(sample)
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x5A
            let result = damaged.withUnsafeBytes { CacheEntryFormat.decode($0, expectedKey: sample.key) }
            if case .entry = result { Issue.record("a flipped byte at \(index) was not detected") }
        }
    }

    @Test func everyTruncationIsDetected() {
        let bytes = CacheEntryFormat.encode(sample)
        for length in 0..<bytes.count {
            let result = Array(bytes.prefix(length)).withUnsafeBytes { CacheEntryFormat.decode($0, expectedKey: sample.key) }
            guard case .corrupt = result else {
                Issue.record("a file cut at \(length) bytes was not reported corrupt")
                continue
            }
        }
        let extended = bytes + [0]
        if case .entry = extended.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: sample.key) }) {
            Issue.record("a file with a trailing byte was accepted")
        }
    }

    @Test func anEntryForAnotherKeyIsACollisionNotAnAnswer() {
        let bytes = CacheEntryFormat.encode(sample)
        guard case .otherKey = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: "https://example.com/other") }) else {
            Issue.record("a colliding key was not reported")
            return
        }
    }

    @Test func randomBytesNeverDecodeOrCrash() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 31, 32, 33, 100, 4096] {
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if length >= 4 { bytes.replaceSubrange(0..<4, with: CacheEntryFormat.magic) }
            if case .entry = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: nil) }) {
                Issue.record("\(length) random bytes decoded as an entry")
            }
        }
    }

    @Test(arguments: [16, 8, 12])
    func aLengthFieldOfAllOnesIsCorruptNotATrap(offset: Int) {
        var bytes = CacheEntryFormat.encode(sample)
        let width = offset == 16 ? 8 : 4
        bytes.replaceSubrange(offset..<offset + width, with: [UInt8](repeating: 0xFF, count: width))
        guard case .corrupt = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: sample.key) }) else {
            Issue.record("a length field of all ones at \(offset) was not reported corrupt")
            return
        }
    }

    /// A crafted string length of 2³¹ or more, under a checksum that matches, is a corrupt file:
    /// on a 32-bit platform (watchOS) converting it to `Int` used to trap.
    @Test(arguments: [UInt32(1) << 31, UInt32.max])
    func aStringLengthOfTwoToTheThirtyFirstOrMoreIsCorruptNotATrap(length: UInt32) {
        var bytes = CacheEntryFormat.encode(sample)
        // The first header name's length: after the key, the status (2), two dates (8 + 8) and the header count (4).
        let offset = CacheEntryFormat.headerSize + sample.key.utf8.count + 22
        withUnsafeBytes(of: length.littleEndian) { bytes.replaceSubrange(offset..<offset + 4, with: $0) }
        let checksum = XXH64.hash(Array(bytes[CacheEntryFormat.headerSize...]))
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(24..<32, with: $0) }
        guard case .corrupt(let reason) = bytes.withUnsafeBytes({ CacheEntryFormat.decode($0, expectedKey: sample.key) }) else {
            Issue.record("a string length of \(length) was not reported corrupt")
            return
        }
        #expect(reason == "unreadable metadata")
    }
}
