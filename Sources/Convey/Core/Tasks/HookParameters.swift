import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `willSendRequest(request:)` works on: Convey's `OutgoingRequest`.
///
/// Foundation's `URLRequest` conforms too, deprecated, so that a hook written with it the way
/// earlier versions of Convey (and the original Convey) declared it is still called, converted
/// each way, and its declaration warns with the signature to use instead. The compiler picks the
/// type from your hook's signature (`DownloadingTask.HookRequest`).
public protocol WillSendRequestParameter: Sendable {
    /// `request` as this type, for the hook.
    static func hookParameter(_ request: OutgoingRequest) -> Self
    /// What the hook returned, as the request Convey sends; throws `ConveyError.invalidURL` when it cannot be sent.
    func outgoingRequest() throws -> OutgoingRequest
}

/// What `didReceiveResponse(response:data:)` gets: Convey's `ResponseHead`.
///
/// Foundation's `HTTPURLResponse` conforms too, deprecated, so that a hook written with it is
/// still called, and its declaration warns with the signature to use instead. The compiler picks
/// the type from your hook's signature (`DownloadingTask.HookResponse`).
public protocol DidReceiveResponseParameter: Sendable {
    /// `head` as this type, for the hook; `nil` when it cannot be made (a subclass of Foundation's type).
    static func hookParameter(_ head: ResponseHead) -> Self?
}

extension OutgoingRequest: WillSendRequestParameter {
    public static func hookParameter(_ request: OutgoingRequest) -> OutgoingRequest { request }
    public func outgoingRequest() throws -> OutgoingRequest { self }
}

extension ResponseHead: DidReceiveResponseParameter {
    public static func hookParameter(_ head: ResponseHead) -> ResponseHead? { head }
}

@available(*, deprecated, message: "declare willSendRequest(request: OutgoingRequest) async throws -> OutgoingRequest: hooks take Convey's OutgoingRequest (its urlRequest is Foundation's form)")
extension URLRequest: WillSendRequestParameter {
    public static func hookParameter(_ request: OutgoingRequest) -> URLRequest { request.urlRequest }
    public func outgoingRequest() throws -> OutgoingRequest {
        guard let request = OutgoingRequest(self) else {
            throw ConveyError.invalidURL("(none)", reason: "the URLRequest willSendRequest returned has no URL")
        }
        return request
    }
}

@available(*, deprecated, message: "declare didReceiveResponse(response: ResponseHead, data: Data) async throws: hooks take Convey's ResponseHead (its httpURLResponse is Foundation's form)")
extension HTTPURLResponse: DidReceiveResponseParameter {
    public static func hookParameter(_ head: ResponseHead) -> Self? { head.httpURLResponse as? Self }
}
