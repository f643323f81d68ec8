@_spi(Transport) @_spi(Tools) import Convey
import Foundation

private struct SearchTask: DemoTask, ServerTask {
    let context: DemoContext
    var path: String { "get" }
    var queryParameters: [String: String]? { ["q": "swift & http = fun?", "limit": "10"] }
}

private struct UserTask: DemoTask {
    typealias DownloadPayload = EchoedRequest
    let context: DemoContext
    var path: String { "anything/users/42" }
}

private struct WrongShapeTask: DemoTask {
    typealias DownloadPayload = [EchoedRequest]
    let context: DemoContext
    var path: String { "get" }
}

private struct CreateUserTask: DemoTask, JSONUploadingTask {
    struct Payload: Encodable, Sendable { let name: String, email: String, password: String }
    let context: DemoContext
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: Payload? { Payload(name: "Ada", email: "ada@example.com", password: DemoSteps.secret) }
}

private struct SignUpFormTask: DemoTask, FormUploadingTask {
    let context: DemoContext
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: [String: String]? { ["city": "Zürich", "note": "a&b=c d"] }
}

private struct NotesUploadTask: DemoTask, MIMEUploadingTask {
    let context: DemoContext
    var path: String { "post" }
    var method: HTTPMethod { .post }
    var uploadPayload: MIMEPayload? {
        MIMEPayload(parts: [
            MIMEPart(name: "notes", data: Data("Convey notes\n".utf8), filename: "notes.txt", mimeType: "text/plain"),
            MIMEPart(name: "description", stringValue: "My notes"),
        ])
    }
}

private struct MissingPageTask: DemoTask, ServerTask {
    let context: DemoContext
    var path: String { "status/404" }
}

extension DemoSteps {
    /// Sent in the JSON upload; the recording step checks that no record holds it.
    static let secret = "hunter2-demo-secret"

    static let getWithQuery = DemoStep(
        title: "GET with query parameters",
        explanation: "A ServerTask with queryParameters: Convey sorts them and percent-encodes every reserved character."
    ) { context in
        await expectEcho(SearchTask(context: context)) { echo in
            echo.args == ["q": "swift & http = fun?", "limit": "10"]
                ? .behaved("the server got q=\"swift & http = fun?\" and limit=10, exactly as written")
                : .misbehaved("the server got \(echo.args)")
        }
    }

    static let typedDecode = DemoStep(
        title: "Typed JSON decode",
        explanation: "A task whose DownloadPayload is a Decodable struct: the body is decoded off the actor into EchoedRequest."
    ) { context in
        do {
            let response = try await UserTask(context: context).download()
            let user = response.payload
            return user.url.hasSuffix("/anything/users/42")
                ? .behaved("payload is EchoedRequest: method \(user.method ?? "?"), url \(user.url)")
                : .misbehaved("decoded an unexpected URL: \(user.url)")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let decodingFailure = DemoStep(
        title: "Decoding failure",
        explanation: "The same body decoded as the wrong type: the error says which type, where in the JSON, and why."
    ) { context in
        do {
            let response = try await WrongShapeTask(context: context).download()
            return .misbehaved("decoded \(response.payload.count) items from an object")
        } catch ConveyError.decodingFailed(let typeName, let codingPath, let reason, _, _) {
            return .behaved("ConveyError.decodingFailed: \(typeName)\(codingPath.isEmpty ? "" : " at \(codingPath)"): \(reason)")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    static let jsonUpload = DemoStep(
        title: "JSON upload",
        explanation: "A JSONUploadingTask posts an Encodable payload. The echo masks the password field; the server gets it whole"
            + " (httpbin echoes the raw body back in \"data\", a string no field-based masking can see into)."
    ) { context in
        await expectEcho(CreateUserTask(context: context)) { echo in
            echo.json == ["name": "Ada", "email": "ada@example.com", "password": secret]
                ? .behaved("the server got name, email and password as sent; the echo above shows password as \(Redaction.mask)")
                : .misbehaved("the server got \(echo.json ?? [:])")
        }
    }

    static let formUpload = DemoStep(
        title: "Form upload",
        explanation: "A FormUploadingTask posts fields as application/x-www-form-urlencoded."
    ) { context in
        await expectEcho(SignUpFormTask(context: context)) { echo in
            echo.form == ["city": "Zürich", "note": "a&b=c d"]
                ? .behaved("the server got the form fields city=Zürich and note=\"a&b=c d\"")
                : .misbehaved("the server got \(echo.form ?? [:])")
        }
    }

    static let multipartUpload = DemoStep(
        title: "Multipart upload",
        explanation: "A MIMEUploadingTask posts a file and a field as multipart/form-data."
    ) { context in
        await expectEcho(NotesUploadTask(context: context)) { echo in
            echo.files == ["notes": "Convey notes\n"] && echo.form == ["description": "My notes"]
                ? .behaved("the server got the file notes.txt and the field description")
                : .misbehaved("the server got files \(echo.files ?? [:]) and form \(echo.form ?? [:])")
        }
    }

    static let httpErrorStatus = DemoStep(
        title: "HTTP error status",
        explanation: "A 404 throws HTTPError (reportBadHTTPStatusAsError is on by default), with the status class and a message for people."
    ) { context in
        do {
            try await MissingPageTask(context: context).send()
            return .misbehaved("a 404 did not throw")
        } catch let error as HTTPError {
            return error.clientError == .notFound
                ? .behaved("HTTPError 404: clientError is .notFound, userMessage \"\(error.userMessage ?? "")\"")
                : .misbehaved("HTTPError \(error.statusCode)")
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }

    /// Runs a task whose body is an httpbin echo and judges the echo.
    @ConveyActor
    private static func expectEcho<Task: DownloadingTask>(_ task: Task, judge: (EchoedRequest) -> DemoStep.Outcome) async -> DemoStep.Outcome {
        do {
            let response = try await task.download()
            return judge(try response.decoding(as: EchoedRequest.self).payload)
        } catch {
            return .misbehaved(DemoText.error(error))
        }
    }
}
