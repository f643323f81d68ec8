import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A pin set against a server's chain (leaf, intermediate, root), as the URLSession transport checks it.
@Suite("Pins against a chain", .openssl)
struct ChainPinMatchTests {
    private func pins(_ texts: String...) throws -> PinnedKeys {
        PinnedKeys(try texts.map { try #require(PublicKeyPin($0)) })
    }

    @Test func aPinOnTheLeafMatchesAtPositionZero() throws {
        let material = try CertificateMaterial.get()
        let match = try #require(try pins(material.chainPins.leaf).match(chain: material.chain()))
        #expect(match.position == 0)
        #expect(match.summary == "CN=leaf.convey.test")
        #expect(match.pin.description == material.chainPins.leaf)
    }

    @Test func aPinOnTheIntermediateMatchesAtPositionOne() throws {
        let material = try CertificateMaterial.get()
        let match = try #require(try pins(material.chainPins.intermediate).match(chain: material.chain()))
        #expect(match.position == 1)
        #expect(match.summary == "CN=Convey Intermediate")
    }

    @Test func aPinOnTheRootMatchesAtPositionTwo() throws {
        let material = try CertificateMaterial.get()
        let match = try #require(try pins(material.chainPins.root).match(chain: material.chain()))
        #expect(match.position == 2)
        #expect(match.summary == "CN=Convey Root")
    }

    @Test func theFirstPinnedCertificateOfTheChainIsTheMatch() throws {
        let material = try CertificateMaterial.get()
        let match = try pins(material.chainPins.root, material.chainPins.intermediate).match(chain: material.chain())
        #expect(match?.position == 1)
    }

    @Test func noPinInTheChainIsNoMatch() throws {
        let material = try CertificateMaterial.get()
        let other = try #require(material.pins[.p384])
        #expect(try pins(other).match(chain: material.chain()) == nil)
        #expect(try pins(other).match(chain: []) == nil)
    }

    @Test func everyTruncationOfACertificateIsATypedErrorNamingItsPlace() throws {
        let material = try CertificateMaterial.get()
        let chain = try material.chain()
        let leaf = try #require(chain.first)
        let pinned = try pins(material.chainPins.root)
        for length in 0..<leaf.count {
            let error = #expect(throws: CertificateError.self) {
                try pinned.match(chain: [Array(leaf.prefix(length))] + chain.dropFirst())
            }
            #expect(error?.source == "certificate 1 of 3 in the chain")
        }
    }

    @Test func alteredTagsAndLengthsAreTypedErrorsWithTheirOffset() throws {
        let material = try CertificateMaterial.get()
        let chain = try material.chain()
        let intermediate = chain[1]
        var badTag = intermediate
        badTag[0] = 0x31
        let tagError = #expect(throws: CertificateError.self) { try PinnedKeys([]).match(chain: [chain[0], badTag]) }
        #expect(tagError?.source == "certificate 2 of 2 in the chain")
        #expect(tagError?.offset == 0)
        #expect(tagError?.reason.contains("the Certificate has tag 0x31") == true)
        var longer = intermediate
        longer.append(0)
        let trailing = #expect(throws: CertificateError.self) { try PinnedKeys([]).match(chain: [longer]) }
        #expect(trailing?.reason == "the Certificate is followed by 1 extra byte")
        #expect(trailing?.offset == intermediate.count)
        // Every single byte flipped: an error or a certificate, never a crash.
        for index in intermediate.indices {
            var flipped = intermediate
            flipped[index] ^= 0xFF
            _ = try? PinnedKeys([]).match(chain: [flipped])
        }
    }

    @Test func garbageIsNeverACertificate() {
        let garbage: [UInt8] = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let error = #expect(throws: CertificateError.self) { try PinnedKeys([]).match(chain: [garbage]) }
        #expect(error?.source == "certificate 1 of 1 in the chain")
    }
}
