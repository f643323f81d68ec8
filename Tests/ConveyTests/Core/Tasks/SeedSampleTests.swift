import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

// The samples from the seed document's "Common Task Patterns", exactly as written, run against
// the local httpbin. The default server's remote puts every path under httpbin's `/anything`,
// which echoes the request back.

let token = "sample-token"
let fileData = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46])

struct FetchUserTask: ServerTask {
    let userId: String
    var path: String { "users/\(userId)" }
}

struct CreateUserTask: JSONUploadingTask {
    struct Payload: Codable { let name: String, email: String }

    var path: String { "users" }
    var method: HTTPMethod { .post }
    var uploadPayload: Payload?

    init(name: String, email: String) {
        self.uploadPayload = Payload(name: name, email: email)
    }
}

struct AuthenticatedTask: ServerTask {
    var path: String { "profile" }

    var headers: Headers {
        get async throws {
            var headers = try await server.headers(for: self)
            headers.append(Header(name: "Authorization", value: "Bearer \(token)"))
            return headers
        }
    }
}

struct SearchTask: ServerTask {
    let query: String
    var path: String { "search" }
    var queryParameters: [String: String]? { ["q": query, "limit": "10"] }
}

struct FormUploadTask: FormUploadingTask {
    var path: String { "submit" }
    var method: HTTPMethod { .post }
    var uploadPayload: [String: String]? { ["field1": "value1", "field2": "value2"] }
}

struct FileUploadTask: MIMEUploadingTask {
    var path: String { "upload" }
    var method: HTTPMethod { .post }
    var uploadPayload: MIMEPayload? {
        MIMEPayload(parts: [
            MIMEPart(name: "file", data: fileData, filename: "photo.jpg", mimeType: "image/jpeg"),
            MIMEPart(name: "description", stringValue: "My photo")
        ])
    }
}

/// The app's server, made the default the way the seed describes.
@ConveyActor
enum SampleServer {
    private(set) static var server: ConveyServer?

    /// Makes the sample server the default again when another test installed its own.
    static func install() throws {
        if let server, ConveyServer.default === server { return }
        server = ConveyServer(remote: try TestServers.httpbin(pathPrefix: "anything"),
                              configuration: ServerConfiguration(echoSink: EchoCapture().sink), asDefault: true)
    }
}

extension DefaultServerSuites {
@Suite("Seed samples", .wire)
struct SeedSampleTests {
    init() async throws { try await SampleServer.install() }

    @Test @ConveyActor func tasksThatNameNoServerRunOnTheDefaultServer() throws {
        let installed = try #require(SampleServer.server)
        #expect(ConveyServer.default === installed)
        #expect(FetchUserTask(userId: "1").server === installed)
        let other = ConveyServer(asDefault: false)
        #expect(ConveyServer.default === installed && other !== installed)
    }

    @Test func basicGETDownloadsTheUser() async throws {
        let task = FetchUserTask(userId: "123")
        let data = try await task.download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: data.payload)
        #expect(data.statusCode == 200)
        #expect(echo.method == "GET")
        #expect(echo.url?.hasSuffix("/anything/users/123") == true)
    }

    @Test func postWithJSONSendsTheEncodedPayload() async throws {
        let response = try await CreateUserTask(name: "Ada", email: "ada@example.com").download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.method == "POST")
        #expect(echo.headers["Content-Type"] == "application/json")
        #expect(echo.json == .object(["name": .string("Ada"), "email": .string("ada@example.com")]))
    }

    @Test func customHeadersReachTheServer() async throws {
        let response = try await AuthenticatedTask().download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.headers["Authorization"] == "Bearer sample-token")
    }

    @Test func queryParametersArriveDecoded() async throws {
        let response = try await SearchTask(query: "swift & http = fun?").download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.args == ["q": "swift & http = fun?", "limit": "10"])
    }

    @Test func taskExecutionExposesPayloadStatusAndDuration() async throws {
        let task = FetchUserTask(userId: "42")
        let response = try await task.download()
        let payload = response.payload
        let statusCode = response.statusCode
        let duration = response.duration
        #expect(payload == response.data)
        #expect(statusCode == 200)
        #expect(duration > .zero)
        try await task.send()
    }

    @Test func formUploadSendsURLEncodedFields() async throws {
        let response = try await FormUploadTask().download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.form == ["field1": "value1", "field2": "value2"])
        #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test func multipartUploadSendsFileAndField() async throws {
        let response = try await FileUploadTask().download()
        let echo = try JSONDecoder().decode(HTTPBinEcho.self, from: response.data)
        #expect(echo.form == ["description": "My photo"])
        // httpbin reports non-UTF-8 files as a data URL of their bytes.
        #expect(echo.files?["file"] == "data:image/jpeg;base64," + fileData.base64EncodedString())
    }
}
}
