import Foundation
import Testing
@testable import Convey

@Suite("WebSocket opening handshake")
struct WebSocketHandshakeTests {
    private let url = URL(string: "http://127.0.0.1/chat")!

    /// A 101 that accepts `handshake`, with extra or replaced fields.
    private func head(for handshake: WebSocketHandshake, status: Int = 101, _ changes: [String: String?] = [:]) -> ResponseHead {
        var fields: Headers = [
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Accept": WebSocketHandshake.acceptValue(forKey: handshake.key),
        ]
        for (name, value) in changes { fields[name] = value }
        return ResponseHead(statusCode: status, fields: fields, url: url)
    }

    @Test func sha1MatchesTheStandardTestVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        // 56 bytes: the padding spills into a second block.
        #expect(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func theAcceptValueIsRFC6455sExample() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func eachHandshakeHasAFreshSixteenByteKey() throws {
        let keys = try (0..<20).map { _ in try WebSocketHandshake().key }
        #expect(Set(keys).count == 20)
        for key in keys { #expect(Data(base64Encoded: key)?.count == 16) }
    }

    @Test func theRequestFieldsOfferVersion13TheKeySubprotocolsAndDeflate() throws {
        let handshake = try WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", subprotocols: ["chat", "superchat"])
        #expect(handshake.requestFields == [
            Header(name: "Upgrade", value: "websocket"),
            Header(name: "Connection", value: "Upgrade"),
            Header(name: "Sec-WebSocket-Version", value: "13"),
            Header(name: "Sec-WebSocket-Key", value: "dGhlIHNhbXBsZSBub25jZQ=="),
            Header(name: "Sec-WebSocket-Protocol", value: "chat, superchat"),
            Header(name: "Sec-WebSocket-Extensions", value: "permessage-deflate; client_max_window_bits"),
        ])
        let plain = try WebSocketHandshake(key: "k", deflateOffer: nil)
        #expect(plain.requestFields.map(\.name) == ["Upgrade", "Connection", "Sec-WebSocket-Version", "Sec-WebSocket-Key"])
    }

    @Test func theDeflateOfferSpellsEachParameter() {
        var offer = PerMessageDeflateOffer()
        offer.serverNoContextTakeover = true
        offer.clientNoContextTakeover = true
        offer.serverMaxWindowBits = 10
        offer.clientMaxWindowBits = 12
        #expect(offer.fieldValue
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=12")
    }

    @Test func anOfferThatCannotBeMadeIsRefused() {
        #expect(throws: WebSocketHandshakeError.invalidSubprotocolOffer("a b", reason: "it is not an HTTP token")) {
            try WebSocketHandshake(subprotocols: ["a b"])
        }
        #expect(throws: WebSocketHandshakeError.invalidSubprotocolOffer("chat", reason: "it is offered twice")) {
            try WebSocketHandshake(subprotocols: ["chat", "chat"])
        }
        var offer = PerMessageDeflateOffer()
        offer.serverMaxWindowBits = 16
        #expect(throws: WebSocketHandshakeError.invalidDeflateOffer("server_max_window_bits is 16; RFC 7692 allows 8 to 15")) {
            try WebSocketHandshake(deflateOffer: offer)
        }
    }

    @Test func aValid101IsUpgradedWithWhatWasNegotiated() throws {
        let handshake = try WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==", subprotocols: ["chat", "superchat"])
        let answer = head(for: handshake, [
            "Upgrade": "WebSocket", "Connection": "keep-alive, upgrade",
            "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
            "Sec-WebSocket-Protocol": "superchat",
            "Sec-WebSocket-Extensions": "permessage-deflate; server_no_context_takeover; client_max_window_bits=10",
        ])
        let expected = WebSocketNegotiation(
            subprotocol: "superchat",
            extensions: ["permessage-deflate; server_no_context_takeover; client_max_window_bits=10"],
            deflate: PerMessageDeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: false,
                                                 serverMaxWindowBits: 15, clientMaxWindowBits: 10))
        #expect(try handshake.check(answer) == .upgraded(expected))
    }

    @Test func aServerThatChoosesNothingNegotiatesNothing() throws {
        let handshake = try WebSocketHandshake(subprotocols: ["chat"])
        #expect(try handshake.check(head(for: handshake)) == .upgraded(WebSocketNegotiation(subprotocol: nil, extensions: [], deflate: nil)))
    }

    @Test func aStatusOtherThan101IsDeclinedNotAnError() throws {
        let handshake = try WebSocketHandshake()
        #expect(try handshake.check(head(for: handshake, status: 401)) == .declined(statusCode: 401))
        #expect(try handshake.check(head(for: handshake, status: 200)) == .declined(statusCode: 200))
    }

    @Test func a101WithoutUpgradeWebSocketFails() throws {
        let handshake = try WebSocketHandshake()
        #expect(throws: WebSocketHandshakeError.upgradeNotWebSocket(nil)) { try handshake.check(head(for: handshake, ["Upgrade": nil])) }
        #expect(throws: WebSocketHandshakeError.upgradeNotWebSocket("h2c")) { try handshake.check(head(for: handshake, ["Upgrade": "h2c"])) }
    }

    @Test func a101WithoutTheUpgradeConnectionTokenFails() throws {
        let handshake = try WebSocketHandshake()
        #expect(throws: WebSocketHandshakeError.connectionWithoutUpgrade(nil)) {
            try handshake.check(head(for: handshake, ["Connection": nil]))
        }
        #expect(throws: WebSocketHandshakeError.connectionWithoutUpgrade("keep-alive, upgraded")) {
            try handshake.check(head(for: handshake, ["Connection": "keep-alive, upgraded"]))
        }
    }

    @Test func aMissingOrWrongAcceptFails() throws {
        let handshake = try WebSocketHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(throws: WebSocketHandshakeError.missingAccept(expected: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")) {
            try handshake.check(head(for: handshake, ["Sec-WebSocket-Accept": nil]))
        }
        // The accept value of another key: what a cache replaying someone else's 101 would send.
        let other = WebSocketHandshake.acceptValue(forKey: "x3JJHMbDL1EzLkh9GBhXDw==")
        #expect(throws: WebSocketHandshakeError.wrongAccept(expected: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", received: other)) {
            try handshake.check(head(for: handshake, ["Sec-WebSocket-Accept": other]))
        }
    }

    @Test func aSubprotocolThatWasNotOfferedFails() throws {
        let offering = try WebSocketHandshake(subprotocols: ["chat"])
        #expect(throws: WebSocketHandshakeError.subprotocolNotOffered("superchat", offered: ["chat"])) {
            try offering.check(head(for: offering, ["Sec-WebSocket-Protocol": "superchat"]))
        }
        let offeringNone = try WebSocketHandshake()
        #expect(throws: WebSocketHandshakeError.subprotocolNotOffered("chat", offered: [])) {
            try offeringNone.check(head(for: offeringNone, ["Sec-WebSocket-Protocol": "chat"]))
        }
    }

    @Test func anExtensionThatWasNotOfferedFails() throws {
        let handshake = try WebSocketHandshake()
        #expect(throws: WebSocketHandshakeError.extensionNotOffered("x-webkit-deflate-frame")) {
            try handshake.check(head(for: handshake, ["Sec-WebSocket-Extensions": "x-webkit-deflate-frame"]))
        }
        let withoutDeflate = try WebSocketHandshake(deflateOffer: nil)
        #expect(throws: WebSocketHandshakeError.extensionNotOffered("permessage-deflate")) {
            try withoutDeflate.check(head(for: withoutDeflate, ["Sec-WebSocket-Extensions": "permessage-deflate"]))
        }
        #expect(throws: WebSocketHandshakeError.extensionRepeated("permessage-deflate")) {
            try handshake.check(head(for: handshake, ["Sec-WebSocket-Extensions": "permessage-deflate, permessage-deflate"]))
        }
        #expect(throws: WebSocketHandshakeError.malformedExtensionsField("permessage-deflate; =1")) {
            try handshake.check(head(for: handshake, ["Sec-WebSocket-Extensions": "permessage-deflate; =1"]))
        }
    }

    /// The deflate parameters a server answers with, as the client reads them.
    private func negotiate(_ parameters: String, offer: PerMessageDeflateOffer = PerMessageDeflateOffer()) throws -> PerMessageDeflateParameters {
        let list = try WebSocketExtension.parseList("permessage-deflate" + parameters)
        return try offer.accept(list[0])
    }

    @Test func theServersDeflateParametersAreRead() throws {
        #expect(try negotiate("") == PerMessageDeflateParameters())
        #expect(try negotiate("; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=8; client_max_window_bits=9")
                == PerMessageDeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 8, clientMaxWindowBits: 9))
        // A quoted value is the same value (RFC 7692 §7.1).
        #expect(try negotiate(";server_max_window_bits=\"10\"").serverMaxWindowBits == 10)
        // What the client offered for itself holds whatever the server answers.
        var offer = PerMessageDeflateOffer()
        offer.clientNoContextTakeover = true
        offer.clientMaxWindowBits = 11
        #expect(try negotiate("", offer: offer) == PerMessageDeflateParameters(clientNoContextTakeover: true, clientMaxWindowBits: 11))
        // The server may shrink its own window and give up its context unasked.
        #expect(try negotiate("; server_max_window_bits=9; server_no_context_takeover")
                == PerMessageDeflateParameters(serverNoContextTakeover: true, serverMaxWindowBits: 9))
    }

    @Test func deflateParametersRFC7692RefusesFailTheHandshake() throws {
        func refusal(_ parameter: String, _ reason: String) -> WebSocketHandshakeError {
            .invalidExtensionParameter(extension: "permessage-deflate", parameter: parameter, reason: reason)
        }
        #expect(throws: refusal("x_unknown", "RFC 7692 defines no such parameter")) { try negotiate("; x_unknown") }
        #expect(throws: refusal("server_no_context_takeover", "it appears twice")) {
            try negotiate("; server_no_context_takeover; server_no_context_takeover")
        }
        #expect(throws: refusal("client_max_window_bits", "it appears twice")) {
            try negotiate("; client_max_window_bits=10; client_max_window_bits=10")
        }
        #expect(throws: refusal("client_no_context_takeover", "it takes no value")) { try negotiate("; client_no_context_takeover=1") }
        #expect(throws: refusal("server_max_window_bits", "a response must give it a value")) { try negotiate("; server_max_window_bits") }
        #expect(throws: refusal("client_max_window_bits", "a response must give it a value")) { try negotiate("; client_max_window_bits") }
        for bad in ["7", "16", "010", "ten", "-9"] {
            #expect(throws: refusal("server_max_window_bits", "its value \"\(bad)\" is not a window size from 8 to 15")) {
                try negotiate("; server_max_window_bits=\(bad)")
            }
        }
        var offer = PerMessageDeflateOffer()
        offer.serverNoContextTakeover = true
        offer.serverMaxWindowBits = 10
        offer.clientMaxWindowBits = 10
        #expect(throws: refusal("server_no_context_takeover", "the offer asked for it and the response leaves it out")) {
            try negotiate("; server_max_window_bits=10", offer: offer)
        }
        #expect(throws: refusal("server_max_window_bits", "the offer asked for at most 10 and the response leaves it out")) {
            try negotiate("; server_no_context_takeover", offer: offer)
        }
        #expect(throws: refusal("server_max_window_bits", "the response chose 12, more than the 10 offered")) {
            try negotiate("; server_no_context_takeover; server_max_window_bits=12", offer: offer)
        }
        #expect(throws: refusal("client_max_window_bits", "the response chose 11, more than the 10 offered")) {
            try negotiate("; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits=11", offer: offer)
        }
    }

    @Test func theExtensionsFieldIsParsedAsTheGrammarSays() throws {
        let list = try WebSocketExtension.parseList(" foo ; a=1;b=\"12\"; c , , bar")
        #expect(list.map(\.name) == ["foo", "bar"])
        #expect(list[0].parameters == [.init(name: "a", value: "1"), .init(name: "b", value: "12"), .init(name: "c", value: nil)])
        #expect(list[1].parameters == [])
        #expect(list[0].text == "foo ; a=1;b=\"12\"; c")
    }

    @Test func aValueThatIsNoTokenEvenQuotedIsMalformed() {
        // RFC 6455 §9.1: a quoted value must still be a token once unquoted.
        #expect(throws: WebSocketHandshakeError.malformedExtensionsField("foo; b=\"x,y\"")) { try WebSocketExtension.parseList("foo; b=\"x,y\"") }
        #expect(throws: WebSocketHandshakeError.malformedExtensionsField("foo; a=\"\"")) { try WebSocketExtension.parseList("foo; a=\"\"") }
        #expect(throws: WebSocketHandshakeError.malformedExtensionsField("fo o")) { try WebSocketExtension.parseList("fo o") }
        #expect(throws: WebSocketHandshakeError.malformedExtensionsField("foo; =1")) { try WebSocketExtension.parseList("foo; =1") }
    }
}
