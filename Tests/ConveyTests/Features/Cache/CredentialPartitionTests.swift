import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A stored response answers only requests with the same credentials: every kind of credential,
/// every kind of cacheable response, in sequence and concurrently, in memory and on disk.
@Suite("Credential partitions")
@ConveyActor
struct CredentialPartitionTests {
    /// An origin that answers with the credential it saw and the request's number, under `cacheControl`.
    private func echoingOrigin(_ cacheControl: String, credential: String) -> StubOrigin {
        StubOrigin { request, number in
            let seen = request.value(forHTTPHeaderField: credential) ?? request.url.user ?? "-"
            return (200, ["Cache-Control": cacheControl, "Set-Cookie": "issued=\(number)"], "\(seen) \(number)")
        }
    }

    private static let credentialCases: [(header: String, alice: String, bob: String)] = [
        ("Authorization", "Bearer alice", "Bearer bob"),
        ("Cookie", "s=alice", "s=bob"),
        ("X-API-Key", "alice-key", "bob-key"),
        ("Proxy-Authorization", "Basic YWxpY2U6cA==", "Basic Ym9iOnA="),
        ("X-Auth-Token", "alice-token", "bob-token"),
    ]

    @Test(arguments: ["max-age=600", "private, max-age=600", "public, max-age=600", "max-age=0, stale-while-revalidate=600"])
    func anotherUsersRequestNeverGetsTheStoredResponse(cacheControl: String) async throws {
        for credential in Self.credentialCases {
            let origin = echoingOrigin(cacheControl, credential: credential.header)
            let server = try cachingStubServer(origin)
            let alice: Headers = [credential.header: credential.alice]
            let bob: Headers = [credential.header: credential.bob]

            let aliceFirst = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice).download()
            let bobFirst = try await CacheProbeTask(server: server, path: "me", requestHeaders: bob).download()
            #expect(bobFirst.cacheStatus == .network, "\(credential.header), \(cacheControl)")
            #expect(bobFirst.stringResult == "\(credential.bob) 2", "\(credential.header), \(cacheControl)")
            #expect(bobFirst.header("Set-Cookie") == "issued=2")
            let anonymous = try await CacheProbeTask(server: server, path: "me").download()
            #expect(anonymous.cacheStatus == .network)
            #expect(anonymous.stringResult == "- 3")

            // Users taking turns each keep their own hits.
            let aliceAgain = try await CacheProbeTask(server: server, path: "me", requestHeaders: alice).download()
            let bobAgain = try await CacheProbeTask(server: server, path: "me", requestHeaders: bob).download()
            #expect(aliceAgain.stringResult == aliceFirst.stringResult, "\(credential.header), \(cacheControl)")
            #expect(bobAgain.stringResult == bobFirst.stringResult, "\(credential.header), \(cacheControl)")
            #expect([.hit, .stale].contains(aliceAgain.cacheStatus))
            #expect(aliceAgain.header("Set-Cookie") == nil, "a stored Set-Cookie would hand one session to every later caller")
        }
    }

    @Test func aHeaderTheAppNamesAsACredentialPartitionsToo() async throws {
        let origin = echoingOrigin("max-age=600", credential: "X-Tenant")
        let server = try stubServer(origin.transport) {
            $0.cache = DataCache()
            $0.redaction.headerNames.insert("x-tenant")
        }
        _ = try await CacheProbeTask(server: server, path: "me", requestHeaders: ["X-Tenant": "alice"]).download()
        let bob = try await CacheProbeTask(server: server, path: "me", requestHeaders: ["X-Tenant": "bob"]).download()
        #expect(bob.cacheStatus == .network)
        #expect(bob.stringResult == "bob 2")
    }

    @Test func userInfoInTheURLIsACredentialAndNotPartOfTheKey() async throws {
        // Convey sends user info as `Authorization: Basic`, which the origin echoes.
        let origin = echoingOrigin("max-age=600", credential: "Authorization")
        let cache = DataCache()
        let server = try cachingStubServer(origin, cache: cache)
        let alice = try await cache.data(from: try testURL("https://alice:secret-a@stub.example/me"), server: server)
        let bob = try await cache.data(from: try testURL("https://bob:secret-b@stub.example/me"), server: server)
        let aliceAgain = try await cache.data(from: try testURL("https://alice:secret-a@stub.example/me"), server: server)
        #expect(alice.cacheStatus == .network)
        #expect(bob.cacheStatus == .network)
        #expect(aliceAgain.cacheStatus == .hit)
        #expect(String(decoding: bob.payload, as: UTF8.self) == "Basic \(Data("bob:secret-b".utf8).base64EncodedString()) 2")
        #expect(origin.count == 2)
    }

    @Test func concurrentUsersNeverShareAnExchange() async throws {
        let gate = Gate()
        let origin = echoingOrigin("max-age=600", credential: "Cookie")
        let inner = origin.transport
        let cache = DataCache()
        let server = try stubServer(StubTransport { request in
            try await gate.wait()
            return try await inner.send(TransportRequest(request: request.request, timeout: request.timeout))
        }) { $0.cache = cache }
        let users = ["alice", "bob", "alice", "bob"]
        let runs = users.map { user in
            Task { @ConveyActor in
                try await CacheProbeTask(server: server, path: "me", requestHeaders: ["Cookie": "s=\(user)"]).download()
            }
        }
        try await waitUntil("4 callers wait") { cache.coalescer.waitingCount == 4 }
        gate.open()
        for (user, run) in zip(users, runs) {
            let response = try await run.value
            #expect(response.stringResult?.hasPrefix("s=\(user) ") == true)
        }
        #expect(origin.count == 2)
    }

    @Test func processesSharingAFolderKeepUsersApartAndEachUsersHits() async throws {
        try await withTemporaryFolder { folder in
            // The body names the user without repeating the credential, so the files can be searched for it.
            let origin = StubOrigin { request, number in
                let user = request.value(forHTTPHeaderField: "Cookie")?.contains("alice") == true ? "alice" : "bob"
                return (200, ["Cache-Control": "max-age=600"], "\(user) \(number)")
            }
            let first = try cachingStubServer(origin, cache: try DataCache(folder: folder))
            _ = try await CacheProbeTask(server: first, path: "me", requestHeaders: ["Cookie": "s=alice-secret"]).download()
            await first.configuration.cache?.flush()

            // Another process: another instance on the same folder.
            let second = try cachingStubServer(origin, cache: try DataCache(folder: folder))
            let bob = try await CacheProbeTask(server: second, path: "me", requestHeaders: ["Cookie": "s=bob-secret"]).download()
            #expect(bob.cacheStatus == .network)
            #expect(bob.stringResult == "bob 2")
            let alice = try await CacheProbeTask(server: second, path: "me", requestHeaders: ["Cookie": "s=alice-secret"]).download()
            #expect(alice.cacheStatus == .hit)
            #expect(alice.stringResult == "alice 1")
            await second.configuration.cache?.flush()

            // No credential is kept in clear, only the keyed hash.
            let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects as? [URL])
            for file in files {
                guard let bytes = FileManager.default.contents(atPath: file.path) else { continue }
                #expect(!String(decoding: bytes, as: UTF8.self).contains("secret"), "\(file.lastPathComponent)")
            }
        }
    }

    @Test func thePartitionKeyFileIsOwnerOnlyAndAPlantedOneIsRefused() async throws {
        try await withTemporaryFolder { folder in
            _ = try DataCache(folder: folder)
            let keyFile = folder.appending(path: CachePartitionKey.fileName)
            let mode = try #require(FileManager.default.attributesOfItem(atPath: keyFile.path)[.posixPermissions] as? Int)
            #expect(mode & 0o777 == 0o600)
            let key = try CachePartitionKey.stored(in: folder)
            #expect(try CachePartitionKey.stored(in: folder) == key)

            let planted = folder.appending(path: "planted")
            try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
            let victim = folder.appending(path: "victim")
            try Data(repeating: 7, count: CachePartitionKey.length).write(to: victim)
            try FileManager.default.createSymbolicLink(at: planted.appending(path: CachePartitionKey.fileName), withDestinationURL: victim)
            #expect {
                _ = try DataCache(folder: planted)
            } throws: { error in
                guard let failure = (error as? ConveyError)?.cacheFailure else { return false }
                return failure.notCached == false
            }
        }
    }

    @Test func aChangeByOneUserRemovesEveryUsersStoredResponse() async throws {
        let origin = StubOrigin { request, number in
            (200, ["Cache-Control": "max-age=600"], "\(request.value(forHTTPHeaderField: "Cookie") ?? "-") \(number)")
        }
        let server = try cachingStubServer(origin)
        _ = try await CacheProbeTask(server: server, path: "list", requestHeaders: ["Cookie": "s=alice"]).download()
        _ = try await CacheProbeTask(server: server, path: "list", requestHeaders: ["Cookie": "s=bob"]).download()
        _ = try await CacheProbeTask(server: server, path: "list", requestHeaders: ["Cookie": "s=alice"], method: .post).download()
        let bob = try await CacheProbeTask(server: server, path: "list", requestHeaders: ["Cookie": "s=bob"]).download()
        #expect(bob.cacheStatus == .network)
        #expect(bob.stringResult == "s=bob 4")
    }

    @Test func theTagIsAKeyedHashOfTheCredentialsOnly() throws {
        let url = try testURL("https://stub.example/me")
        var request = OutgoingRequest(url: url)
        request.setValue("s=alice", forHTTPHeaderField: "Cookie")
        request.setValue("en", forHTTPHeaderField: "Accept-Language")
        let key = CachePartitionKey.random()
        let tag = try #require(CredentialPartition(of: request, credentials: .none, key: key).tag)
        #expect(tag.count == 64)
        #expect(!tag.contains("alice"))
        var otherLanguage = request
        otherLanguage.setValue("fr", forHTTPHeaderField: "Accept-Language")
        #expect(CredentialPartition(of: otherLanguage, credentials: .none, key: key).tag == tag)
        #expect(CredentialPartition(of: request, credentials: .none, key: CachePartitionKey.random()).tag != tag)
        #expect(CredentialPartition(of: OutgoingRequest(url: url), credentials: .none, key: key) == .anonymous)
    }
}
