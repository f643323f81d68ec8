import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The certificates URLSessionTransport presents after a PKCS#12 bundle's identity on Apple
/// platforms (`URLCredential(identity:certificates:persistence:)`): the bundle's chain, in order,
/// less the identity's own certificate, decided here on the certificates' DER.
@Suite("Client certificate chain")
struct ClientCertificateChainTests {
    private let leaf = Data("leaf".utf8), intermediate = Data("intermediate".utf8), root = Data("root".utf8)

    @Test func theChainIsPresentedInOrderLessTheLeaf() {
        #expect(ChallengeAnswers.chainLessLeaf([leaf, intermediate, root], leaf: leaf) { $0 } == [intermediate, root])
        // Wherever the bundle put the leaf, and however often.
        #expect(ChallengeAnswers.chainLessLeaf([intermediate, leaf, root, leaf], leaf: leaf) { $0 } == [intermediate, root])
    }

    @Test func aBundleWithTheLeafAloneAddsNothing() {
        #expect(ChallengeAnswers.chainLessLeaf([leaf], leaf: leaf) { $0 }.isEmpty)
        #expect(ChallengeAnswers.chainLessLeaf([Data](), leaf: leaf) { $0 }.isEmpty)
    }

    @Test func withoutTheLeafsCertificateTheChainsFirstIsTakenForIt() {
        #expect(ChallengeAnswers.chainLessLeaf([leaf, intermediate], leaf: nil) { $0 } == [intermediate])
    }
}
