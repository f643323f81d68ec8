import Convey
import Foundation

extension RequestOptions {
    /// The task for this request against `server`; a `--data` file must be readable.
    @ConveyActor
    func task(on server: ConveyServer, method: HTTPMethod) throws(LocalFailure) -> any ManualTask {
        let request = ManualRequest(server: server, method: method, path: path, query: query, headers: headers,
                                    echoStyle: echo, timeout: timeout)
        switch body {
        case .none:
            return RawManualTask(request: request, body: nil)
        case .data(let data, let contentType):
            return RawManualTask(request: request, body: RequestBody(data: data, contentType: contentType))
        case .file(let file, let contentType):
            guard FileManager.default.isReadableFile(atPath: file.path(percentEncoded: false)) else {
                throw LocalFailure(message: "--data: cannot read \(file.path(percentEncoded: false))")
            }
            return RawManualTask(request: request, body: RequestBody(file: file, contentType: contentType))
        case .form(let fields):
            return FormManualTask(request: request, uploadPayload: fields)
        case .multipart(let fields, let files):
            let parts = fields.sorted { $0.key < $1.key }.map { MIMEPart(name: $0.key, stringValue: $0.value) }
                + files.map { MIMEPart(name: $0.field, fileURL: $0.file, mimeType: MediaType.guess(for: $0.file)) }
            return MultipartManualTask(request: request, uploadPayload: MIMEPayload(parts: parts))
        }
    }
}
