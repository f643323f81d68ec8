import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// Header names must be tokens and values free of CR, LF and NUL, wherever they come from.
struct FieldValidationTests {
    @Test func tokensAndOrdinaryValuesPass() {
        #expect(FieldValidation.problem(name: "X-Request-ID", value: "abc 123, ü") == nil)
        #expect(FieldValidation.problem(name: "!#$%&'*+-.^_`|~09az", value: "") == nil)
    }

    @Test(arguments: ["", "X Header", "X:Header", "X-Ü", "X\r\nInjected", "(x)"])
    func namesThatAreNotTokensFail(_ name: String) {
        #expect(FieldValidation.problem(name: name, value: "v") != nil)
    }

    @Test(arguments: ["a\rb", "a\nb", "a\u{0}b", "ok\r\nX-Injected: yes"])
    func valuesThatCouldEndTheLineFail(_ value: String) {
        #expect(FieldValidation.problem(name: "X-Note", value: value)?.contains("would end the header line") == true)
    }

    @Test func theErrorNamesTheFieldAndItsSource() {
        let error = #expect(throws: ConveyError.self) {
            try FieldValidation.check(["X-Note": "a\nb"] as Headers, source: .defaultHeaders)
        }
        guard let thrown = error?.headerFieldFailure else { Issue.record("expected invalidHeaderField"); return }
        #expect(thrown.name == "X-Note")
        #expect(thrown.source == "the server configuration's defaultHeaders")
        #expect(thrown.reason == "its value holds a line feed (LF), which would end the header line (RFC 9110 §5.5)")
        let failure = ConveyError.invalidHeaderField(name: "X\r\nY", source: HeaderFieldSource.taskHeaders.phrase, reason: "r")
        #expect(failure.description == #"Header field "X\r\nY" from the task's headers was not sent: r"#)
    }

    @Test @ConveyActor func aMultipartPartNameWithANulByteFailsBeforeSending() async throws {
        let encoder = MultipartEncoder(parts: [MIMEPart(name: "a\u{0}b", stringValue: "x")], compression: .none,
                                       stagingDirectory: FileManager.default.temporaryDirectory)
        await #expect(throws: ConveyError.self) { try await encoder.requestBody() }
    }
}

/// A task whose method comes from the test: one with CR LF in it tries to smuggle a second
/// request past the request line.
private struct SmugglingTask: DownloadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    let path: String
    var method: HTTPMethod = .get
    var queryItems: [URLQueryItem] = []
    var interceptors: [any Interceptor] = []
    var exchangeInterceptors: [any Interceptor] = []
}

/// A step that sets the method it passes on.
private struct MethodStep: Interceptor {
    let method: HTTPMethod

    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        var changed = request
        changed.method = method
        return try await next(changed)
    }
}

/// The request line is held to the rule of the fields: a method with CR LF (a second request
/// smuggled in after it) is refused wherever it comes from, and nothing reaches the server.
@Suite("The request line")
@ConveyActor
struct RequestLineTests {
    enum Source: String, CaseIterable, Sendable {
        case task, runStep, exchangeStep
    }

    static let smuggling = HTTPMethod(rawValue: "GET /count/smuggled HTTP/1.1\r\nHost: x\r\n\r\nGET")

    @Test(arguments: ["GET", "PROPFIND", "M-SEARCH"])
    func tokenMethodsPass(_ method: String) throws {
        try FieldValidation.check(method: HTTPMethod(rawValue: method), source: .taskMethod)
    }

    @Test(arguments: ["", "GET\r\n", "GE T", "GET\u{0}", "GÉT"])
    func methodsThatAreNotTokensFail(_ method: String) {
        let error = #expect(throws: ConveyError.self) { try FieldValidation.check(method: HTTPMethod(rawValue: method), source: .taskMethod) }
        #expect(error?.headerFieldFailure?.name == ":method")
        #expect(error?.headerFieldFailure?.source == "the task's method")
    }

    @Test(.wire, arguments: TransportKind.allCases, Source.allCases)
    func aMethodWithCRLFIsNeverSent(_ kind: TransportKind, _ source: Source) async throws {
        let key = UUID().uuidString
        let server = ConveyServer(remote: try TestServers.faults(), configuration: ServerConfiguration(echoSink: { _ in }))
        server.transport = kind.make()
        var task = SmugglingTask(server: server, path: "count/\(key)")
        switch source {
        case .task: task.method = Self.smuggling
        case .runStep: task.interceptors = [MethodStep(method: Self.smuggling)]
        case .exchangeStep: task.exchangeInterceptors = [MethodStep(method: Self.smuggling)]
        }
        let error = await #expect(throws: ConveyError.self) { try await task.send() }
        #expect(error?.headerFieldFailure?.name == ":method")
        // Nothing reached the server: neither the request nor the one smuggled after it.
        let count = try await SmugglingTask(server: server, path: "count/\(key)", queryItems: [URLQueryItem(name: "read", value: nil)]).download()
        #expect(count.stringResult == "0")
    }
}
