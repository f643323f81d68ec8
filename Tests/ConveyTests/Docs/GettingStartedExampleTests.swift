import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

// Docs/getting-started.md's program, exactly as the page shows it but for its `@main` line (the
// test target has its own entry point): the test below checks that the page still shows this
// code and runs it against the local httpbin.

// getting-started:begin
import Foundation
import Convey

// Where requests go: a remote, and the app's server, made once.
extension Remote {
    static let localHTTPBin = Remote(name: "httpbin", url: URL(string: "http://127.0.0.1:8080")!)
}

final class BinServer: ConveyServer {
    static let shared = BinServer()

    var token = "let-me-in"

    init() {
        super.init(asDefault: true)   // tasks that name no server run on this one
        remote = .localHTTPBin
    }

    override func headers(for task: any DownloadingTask) async throws -> Headers {
        ["Authorization": "Bearer \(token)"]
    }
}

// A GET whose JSON is decoded into your own type.
struct Slideshow: Decodable, Sendable {
    struct Show: Decodable, Sendable {
        let title: String
        let slides: [Slide]
    }
    struct Slide: Decodable, Sendable {
        let title: String
    }
    let slideshow: Show
}

struct FetchSlideshow: DownloadingTask {
    typealias DownloadPayload = Slideshow
    var path: String { "json" }
    var echoStyle: TaskEchoStyle { .consoleMinimum }   // one line per attempt on standard output
}

// A JSON POST; httpbin answers with what it received.
struct Note: Codable, Sendable {
    let title: String
    let text: String
}

struct ReceivedNote: Decodable, Sendable {
    let json: Note?
}

struct CreateNote: JSONUploadingTask {
    typealias DownloadPayload = ReceivedNote
    let uploadPayload: Note?
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var echoStyle: TaskEchoStyle { .consoleMinimum }
}

// A page that is not there: its 404 is an error you catch by name.
struct FetchMissingPage: ServerTask {
    var path: String { "status/404" }
}

struct NotesApp {
    static func main() async {
        _ = await BinServer.shared   // make the default server before the first task
        do {
            try await run()
        } catch {
            print(error.displayMessage ?? "Cancelled.")   // a sentence for a person
            print(error)                                 // what failed, where and why: for you
            exit(1)
        }
    }

    static func run() async throws {
        let slideshow = try await FetchSlideshow().download()
        print("Slideshow: \(slideshow.payload.slideshow.title), \(slideshow.payload.slideshow.slides.count) slides")

        let created = try await CreateNote(uploadPayload: Note(title: "First", text: "Hello")).download()
        print("httpbin received the note \"\(created.payload.json?.title ?? "?")\", status \(created.statusCode)")

        do {
            try await FetchMissingPage().send()
        } catch HTTPError.ClientError.notFound {
            print("No such page: 404, caught by name")
        }
    }
}
// getting-started:end

extension DefaultServerSuites {
    @Suite("The getting-started example")
    @ConveyActor
    struct GettingStartedExampleTests {
        /// The package's root: Tests/ConveyTests/Docs/this file is four levels below it.
        private static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()

        /// This file's example, with the `@main` line the page has.
        private static func example() throws -> String {
            let source = try String(contentsOf: URL(filePath: #filePath), encoding: .utf8)
            let start = try #require(source.range(of: "// getting-started:begin\n")).upperBound
            let end = try #require(source.range(of: "// getting-started:end", range: start..<source.endIndex)).lowerBound
            return source[start..<end].replacingOccurrences(of: "\nstruct NotesApp {", with: "\n@main\nstruct NotesApp {")
        }

        @Test func thePageShowsThisProgramWhole() throws {
            let page = try String(contentsOf: Self.root.appending(path: "Docs/getting-started.md"), encoding: .utf8)
            let program = try Self.example()
            #expect(page.contains("```swift\n" + program + "```\n"), "Docs/getting-started.md no longer shows the program this test runs")
        }

        @Test func thePagesPackageManifestNamesConveysProduct() throws {
            let page = try String(contentsOf: Self.root.appending(path: "Docs/getting-started.md"), encoding: .utf8)
            let manifest = try #require(page.range(of: "// swift-tools-version:").map { String(page[$0.lowerBound...]) }?
                .components(separatedBy: "```").first)
            #expect(manifest.contains(#".package(path: "../convey")"#))
            #expect(manifest.contains(#".product(name: "Convey", package: "convey")"#))
            #expect(manifest.contains(".macOS(.v13)"), "Convey's own minimum, which a package depending on it must meet")
            let tools = try #require(manifest.firstMatch(of: /swift-tools-version: ?(\d+)\.(\d+)/))
            #expect((Int(tools.1) ?? 0, Int(tools.2) ?? 0) >= (6, 2), "Convey needs Swift 6.2")
        }

        @Test(.wire) func theProgramRunsAgainstHTTPBin() async throws {
            // Pointed at the suite's httpbin, whose port is not the page's 8080, before the program runs.
            BinServer.shared.remote = try TestServers.httpbin()
            let echo = EchoCapture()
            BinServer.shared.configuration.echoSink = echo.sink
            #expect(ConveyServer.default === BinServer.shared)

            // The program's body (`main` would exit the process on a failure): throws unless every
            // step works, the 404 caught by name included.
            try await NotesApp.run()

            let lines = echo.text.split(separator: "\n")
            try #require(lines.count == 2, "\(lines)")
            #expect(lines[0].hasPrefix("[Convey] GET http://127.0.0.1:") && lines[0].contains("/json → 200 OK"))
            #expect(lines[1].hasPrefix("[Convey] POST http://127.0.0.1:") && lines[1].contains("/post → 200 OK"))
            let created = try await CreateNote(uploadPayload: Note(title: "Second", text: "Hi")).download()
            #expect(created.payload.json?.title == "Second")
            #expect(created.request.fields["Authorization"] == "Bearer let-me-in")
        }
    }
}
