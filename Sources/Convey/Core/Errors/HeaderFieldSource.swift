/// Where a request header field came from, for the `source` of `ConveyError.invalidHeaderField`.
enum HeaderFieldSource: CaseIterable {
    /// `ServerConfiguration.userAgent`.
    case userAgent
    /// `ServerConfiguration.defaultHeaders`.
    case defaultHeaders
    /// The task's `headers` (by default the server's `headers(for:)`).
    case taskHeaders
    /// The task's `method`.
    case taskMethod
    /// The request body's `contentType` or `contentEncoding`.
    case body
    /// A part header of a multipart body.
    case multipartPart
    /// The request the task's `willSendRequest(request:)` returned.
    case willSendRequest
    /// The request an `Interceptor` passed on.
    case interceptor

    /// Where the field came from, as the error says it.
    var phrase: String {
        switch self {
        case .userAgent: "the server configuration's userAgent"
        case .defaultHeaders: "the server configuration's defaultHeaders"
        case .taskHeaders: "the task's headers"
        case .taskMethod: "the task's method"
        case .body: "the request body's content type or encoding"
        case .multipartPart: "a multipart part's headers"
        case .willSendRequest: "the request willSendRequest returned"
        case .interceptor: "the request an interceptor passed on"
        }
    }
}
