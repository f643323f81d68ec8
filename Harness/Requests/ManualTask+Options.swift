@_spi(Transport) @_spi(Tools) import Convey
import Foundation

extension RequestOptions {
    /// The task for this request in a run's `context`; files the body names must be readable.
    @ConveyActor
    func task(in context: RunContext) throws(LocalFailure) -> any ManualTask {
        var headers = sending.headers
        if body.acceptsJSON, !headers.contains(named: "Accept") { headers.append(Header(name: "Accept", value: "application/json")) }
        let request = context.request(method: method, path: path, query: query, headers: headers, sending: sending)
        switch body.content {
        case .none:
            return RawManualTask(request: request, body: nil)
        case .data(let data, let contentType):
            return RawManualTask(request: request, body: RequestBody(data: data, contentType: contentType))
        case .file(let file, let contentType):
            try Self.checkReadable(file, option: "--data-binary")
            return RawManualTask(request: request, body: RequestBody(file: file, contentType: contentType))
        case .multipart(let fields):
            var parts: [MIMEPart] = []
            for field in fields {
                switch field.value {
                case .text(let text):
                    parts.append(field.mimeType.map { MIMEPart(name: field.name, data: Data(text.utf8), mimeType: $0) }
                                 ?? MIMEPart(name: field.name, stringValue: text))
                case .file(let file, let filename):
                    try Self.checkReadable(file, option: "-F")
                    parts.append(MIMEPart(name: field.name, fileURL: file, filename: filename, mimeType: field.mimeType ?? MediaType.guess(for: file)))
                }
            }
            return MultipartManualTask(request: request, uploadPayload: MIMEPayload(parts: parts))
        }
    }

    private static func checkReadable(_ file: URL, option: String) throws(LocalFailure) {
        guard FileManager.default.isReadableFile(atPath: file.path(percentEncoded: false)) else {
            throw LocalFailure(message: "\(option): cannot read \(file.path(percentEncoded: false))")
        }
    }
}
