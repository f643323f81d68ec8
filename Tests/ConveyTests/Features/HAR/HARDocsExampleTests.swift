import Convey
import ConveyTesting
import Foundation
import Testing

// Docs/fixtures.md's example test, as written there but for the fixture's path.

private struct Profile: Decodable, Sendable {
    let id: Int
    let name: String
}

private struct FetchProfile: DownloadingTask {
    typealias DownloadPayload = Profile
    let server: ConveyServer
    var path: String { "users/42" }
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? { count < 2 ? 0 : nil }
}

@Suite(.harFixtures("../../../Fixtures/har/profile.har"))
@ConveyActor
struct ProfileTests {
    let server = ConveyServer(remote: Remote(name: "api", url: URL(string: "https://api.example.com")!))

    @Test func aProfileLoadsAfterOneRetry() async throws {
        // profile.har holds a 503 and then a 200 for GET https://api.example.com/users/42.
        let response = try await FetchProfile(server: server).download()
        #expect(response.payload.name == "Ada")
        #expect(response.attemptNumber == 2)
    }

    @Test func anotherTestSeesTheSameEntriesFromTheStart() async throws {
        let response = try await FetchProfile(server: server).download()
        #expect(response.attemptNumber == 2)
    }
}
