import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A request type of an app's own for `willSendRequest`, standing in for Foundation's `URLRequest`
/// (whose conformance is deprecated, so using it here would warn): the runner hands the hook this
/// type and sends what it converts back to.
struct AppRequest: HookParameter {
    var url: URL
    var request: OutgoingRequest
    /// Fields the hook adds, set on the way back.
    var added: [String: String] = [:]
    /// Makes the conversion back fail, as a `URLRequest` without a URL does.
    var convertsBack = true

    static func hookParameter(_ request: OutgoingRequest) -> AppRequest? {
        AppRequest(url: request.url, request: request)
    }

    func outgoingRequest() throws -> OutgoingRequest {
        guard convertsBack else { throw ConversionRefused() }
        var request = request
        for (name, value) in added { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    struct ConversionRefused: Error, Equatable {}
}

/// A response type of an app's own for `didReceiveResponse`, standing in for `HTTPURLResponse`;
/// it cannot be made for a 299, as an `HTTPURLResponse` subclass cannot be made from a head.
struct AppResponse: HookParameter {
    let status: Int
    let contentType: String?

    static func hookParameter(_ head: ResponseHead) -> AppResponse? {
        head.statusCode == 299 ? nil : AppResponse(status: head.statusCode, contentType: head.value(forHTTPHeaderField: "Content-Type"))
    }
}

/// A task written the old way: its hooks take types that are not Convey's own, and the runner
/// still calls them, converting each way; the compiler infers `HookRequest` and `HookResponse`
/// from the hooks' signatures.
@Suite("Hooks with other parameter types")
@ConveyActor
struct LegacyHookTests {
    private struct OldStyleTask: ServerTask {
        let server: ConveyServer
        let log: EventLog
        var convertsBack = true
        var path: String { "legacy" }

        func willSendRequest(request: AppRequest) async throws -> AppRequest {
            log.add("willSendRequest \(request.url.path)")
            var request = request
            request.added["X-Converted"] = "yes"
            request.convertsBack = convertsBack
            return request
        }

        func didReceiveResponse(response: AppResponse, data: Data) async throws {
            log.add("didReceiveResponse \(response.status) \(response.contentType ?? "-") \(data.count) bytes")
        }
    }

    @Test func theTaskTakesItsHookTypesFromItsHooks() {
        #expect(OldStyleTask.HookRequest.self == AppRequest.self)
        #expect(OldStyleTask.HookResponse.self == AppResponse.self)
    }

    @Test func hooksTakingOtherTypesAreCalledOnEveryRunWithTheRequestConvertedEachWay() async throws {
        let log = EventLog()
        let seen = RequestLog()
        let server = try stubServer(.answering(headers: ["Content-Type": "text/plain"], body: "legacy", seen: seen))
        for _ in 0..<3 {
            #expect(try await OldStyleTask(server: server, log: log).download().stringResult == "legacy")
        }
        #expect(log.events == Array(repeating: ["willSendRequest /legacy", "didReceiveResponse 200 text/plain 6 bytes"], count: 3).flatMap { $0 })
        #expect(seen.requests.map { $0.request.value(forHTTPHeaderField: "X-Converted") } == ["yes", "yes", "yes"])
        // Both hooks are the task's own, so they stay called.
        #expect(KnownHooks.of(OldStyleTask.self).mustCall(.willSendRequest))
        #expect(KnownHooks.of(OldStyleTask.self).mustCall(.didReceiveResponse))
    }

    @Test func aResponseTheHookTypeCannotBeMadeFromSkipsTheHookNotTheRun() async throws {
        let log = EventLog()
        let server = try stubServer(.answering(status: 299, body: "odd"))
        let response = try await OldStyleTask(server: server, log: log).download()
        #expect(response.statusCode == 299)
        #expect(response.stringResult == "odd")
        #expect(log.events == ["willSendRequest /legacy"])
    }

    @Test func aRequestThatCannotBeConvertedBackFailsTheRunBeforeAnythingIsSent() async throws {
        let log = EventLog()
        let seen = RequestLog()
        let server = try stubServer(.answering(seen: seen))
        var task = OldStyleTask(server: server, log: log)
        task.convertsBack = false
        await #expect(throws: AppRequest.ConversionRefused()) { try await task.download() }
        #expect(seen.requests.isEmpty)
        #expect(log.events == ["willSendRequest /legacy"])
    }
}

#if os(Linux) || os(macOS)
/// A task written against Foundation's types, as earlier versions of Convey declared its hooks,
/// compiled by `swiftc -typecheck` against the built `Convey` module: it still conforms, with its
/// hooks as the witnesses, and each hook's declaration warns with the signature to use instead.
@Suite("Hooks written with Foundation's types")
struct LegacyHookCompileTests {
    /// The client: the hooks' Foundation types become the task's hook types.
    static let source = """
        import Foundation
        #if canImport(FoundationNetworking)
        import FoundationNetworking
        #endif
        import Convey

        struct OldStyle: ServerTask {
            var path: String { "old" }
            func willSendRequest(request: URLRequest) async throws -> URLRequest { request }
            func didReceiveResponse(response: HTTPURLResponse, data: Data) async throws {}
        }

        let hookRequest: OldStyle.HookRequest.Type = URLRequest.self
        let hookResponse: OldStyle.HookResponse.Type = HTTPURLResponse.self
        """

    @Test(.enabled(if: swiftc != nil, "swiftc is not on PATH nor in /opt/swift/usr/bin: no compiler to type-check a client of Convey with"))
    func aTaskWithFoundationTypedHooksStillConformsAndWarnsWithTheSignatureToUse() async throws {
        let swiftc = try #require(Self.swiftc)
        let build = try #require(Self.buildFolder, "the Convey module is not built next to the test bundle nor in .build/debug")
        try await withTemporaryFolder { folder in
            let file = folder.appending(path: "OldStyle.swift")
            try Data(Self.source.utf8).write(to: file)
            let arguments = ["-typecheck", "-I", build.appending(path: "Modules").path] + Self.cModuleMaps(build: build)
                + [file.path]
            let run = try await Self.run(swiftc, arguments, in: folder)
            #expect(run.status == 0, "\(run.output)")
            #expect(!run.output.contains("error:"), "\(run.output)")
            #expect(run.output.contains("conformance of 'URLRequest' to 'HookParameter' is deprecated: "
                + "declare willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest"))
            #expect(run.output.contains("conformance of 'HTTPURLResponse' to 'HookParameter' is deprecated: "
                + "declare didReceiveResponse(response: ResponseHead, data: Data) async throws"))
        }
    }

    /// The compiler: on `PATH`, else where the toolchain is installed here.
    static let swiftc: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/opt/swift/usr/bin", "/usr/bin"]
        return folders.map { URL(filePath: $0).appending(path: "swiftc") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The build folder holding `Modules/Convey.swiftmodule`: the test bundle's, else `.build/debug`.
    static let buildFolder: URL? = {
        var folders: [URL] = []
        if let testBinary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            folders.append(URL(filePath: testBinary).deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        folders.append(packageRoot.appending(path: ".build/debug"))
        return folders.first { FileManager.default.fileExists(atPath: $0.appending(path: "Modules/Convey.swiftmodule").path) }
    }()

    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The module maps of the C modules `Convey` imports, for the compiler to load them: `internal
    /// import` hides a dependency from clients only in library-evolution mode, which Convey is not
    /// built in, so a client compiler still loads them (SwiftPM passes them to a package's clients).
    static func cModuleMaps(build: URL) -> [String] {
        [packageRoot.appending(path: "Sources/CCurl/module.modulemap"), packageRoot.appending(path: "Sources/CZlib/module.modulemap"),
         build.appending(path: "CConveyCurlShim.build/module.modulemap")]
            .filter { FileManager.default.fileExists(atPath: $0.path) }
            .flatMap { ["-Xcc", "-fmodule-map-file=\($0.path)"] }
    }

    struct Run {
        let status: Int32
        let output: String
    }

    /// Runs `executable` with its output in a file, waiting for its exit without blocking a thread.
    static func run(_ executable: URL, _ arguments: [String], in folder: URL) async throws -> Run {
        let outputFile = folder.appending(path: "output")
        try Data().write(to: outputFile)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = folder
        process.standardOutput = output
        process.standardError = output
        let exited = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
        }
        try process.run()
        for await _ in exited {}
        return Run(status: process.terminationStatus, output: try String(contentsOf: outputFile, encoding: .utf8))
    }
}
#endif
