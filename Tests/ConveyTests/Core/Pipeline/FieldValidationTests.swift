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
