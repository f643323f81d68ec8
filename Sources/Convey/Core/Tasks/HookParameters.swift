import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a hook that sees a request or a response works on: Convey's `OutgoingRequest`
/// (`willSendRequest(request:)`) and `ResponseHead` (`didReceiveResponse(response:data:)`).
///
/// Foundation's `URLRequest` and `HTTPURLResponse` conform too, deprecated, so that a hook
/// written with them the way earlier versions of Convey (and the original Convey) declared it is
/// still called, converted each way, and its declaration warns with the signature to use
/// instead. The compiler picks the types from your hooks' signatures
/// (`DownloadingTask.HookRequest`, `DownloadingTask.HookResponse`).
public protocol HookParameter: Sendable {
    /// `request` as this type, for `willSendRequest`; `nil` when this type is no request.
    static func hookParameter(_ request: OutgoingRequest) -> Self?
    /// `head` as this type, for `didReceiveResponse`; `nil` when this type is no response head
    /// or cannot be made from it (a subclass of Foundation's type).
    static func hookParameter(_ head: ResponseHead) -> Self?
    /// What `willSendRequest` returned, as the request Convey sends; throws
    /// `ConveyError.invalidURL` when it cannot be sent.
    func outgoingRequest() throws -> OutgoingRequest
}

extension HookParameter {
    public static func hookParameter(_ request: OutgoingRequest) -> Self? { nil }
    public static func hookParameter(_ head: ResponseHead) -> Self? { nil }
    public func outgoingRequest() throws -> OutgoingRequest {
        throw ConveyError.invalidURL("(none)", reason: "willSendRequest returned a \(Self.self), which is no request: declare it with OutgoingRequest")
    }
}

extension OutgoingRequest: HookParameter {
    public static func hookParameter(_ request: OutgoingRequest) -> OutgoingRequest? { request }
    public func outgoingRequest() throws -> OutgoingRequest { self }
}

extension ResponseHead: HookParameter {
    public static func hookParameter(_ head: ResponseHead) -> ResponseHead? { head }
}

@available(*, deprecated, message: "declare willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest: hooks take Convey's OutgoingRequest (its urlRequest is Foundation's form)")
extension URLRequest: HookParameter {
    public static func hookParameter(_ request: OutgoingRequest) -> URLRequest? { request.urlRequest }
    public func outgoingRequest() throws -> OutgoingRequest {
        guard let request = OutgoingRequest(self) else {
            throw ConveyError.invalidURL("(none)", reason: "the URLRequest willSendRequest returned has no URL")
        }
        return request
    }
}

@available(*, deprecated, message: "declare didReceiveResponse(response: ResponseHead, data: Data) async throws: hooks take Convey's ResponseHead (its httpURLResponse is Foundation's form)")
extension HTTPURLResponse: HookParameter {
    public static func hookParameter(_ head: ResponseHead) -> Self? { head.httpURLResponse as? Self }
}
