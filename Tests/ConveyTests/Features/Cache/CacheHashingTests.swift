import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

@Suite("Cache hashing")
struct CacheHashingTests {
    @Test func sha256MatchesTheStandardTestVectors() {
        #expect(SHA256.hexDigest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        // 56 bytes: the padding spills into a second block.
        #expect(SHA256.hexDigest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func xxh64MatchesTheReferenceVectors() {
        #expect(XXH64.hash(Array("".utf8)) == 0xEF46_DB37_51D8_E999)
        #expect(XXH64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXH64.hash(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x0B24_2D36_1FDA_71BC)
        #expect(XXH64.hash((0..<100).map { UInt8($0) }) == 0x6AC1_E580_3216_6597)
    }

    @Test func cacheFileNamesAreTheSHA256OfTheKeyInAShardFolder() throws {
        try withKnownFolder { tier, folder in
            let path = tier.path(for: "https://example.com/a?b=1")
            let digest = SHA256.hexDigest("https://example.com/a?b=1")
            #expect(path == folder.standardizedFileURL.path + "/" + digest.prefix(2) + "/" + digest)
        }
    }

    private func withKnownFolder(_ body: (DiskTier, URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-hash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(try DiskTier(folder: folder, sizeLimit: 1 << 20, clock: .system), folder)
    }
}
