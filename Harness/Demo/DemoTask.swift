@_spi(Tools) import Convey
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A demo task: it runs against the demo server and logs every hook it sees.
protocol DemoTask: DownloadingTask {
    var context: DemoContext { get }
}

extension DemoTask {
    var server: ConveyServer { context.server }

    func willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest {
        let url = server.configuration.redaction.maskedURL(request.url)
        context.hooks.add("willSendRequest", "\(request.method) \(url)")
        return request
    }

    func didReceiveResponse(response: ResponseHead, data: Data) async throws {
        context.hooks.add("didReceiveResponse", "\(response.statusCode) · \(DisplayFormat.byteCount(data.count))")
    }

    func didFail(with error: any Error) async {
        context.hooks.add("didFail", DemoText.errorName(error))
    }

    func didFinish(with response: ServerResponse<DownloadPayload>) async {
        context.hooks.add("didFinish", "\(response.statusCode) · payload \(DownloadPayload.self) · attempt \(response.attemptNumber)")
    }
}

/// What httpbin (and the embedded server) echo back about a request.
struct EchoedRequest: Decodable, Sendable {
    let args: [String: String]
    let headers: [String: String]
    let url: String
    let method: String?
    let json: [String: String]?
    let form: [String: String]?
    let files: [String: String]?
}
