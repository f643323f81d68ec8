import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A call to a server: what to ask for, and what to do along the way. The base of every task.
///
/// Declare a task as a small struct; every member but `path` has a default:
///
/// ```swift
/// struct FetchUserTask: ServerTask {
///     let userId: String
///     var path: String { "users/\(userId)" }
/// }
/// let response = try await FetchUserTask(userId: "123").download()
/// ```
///
/// A run goes: build the request → `willSendRequest` → send → `didReceiveResponse` → check the
/// status → decode → `didFinish`; on failure, a credential refresh after a 401 or
/// `retryInterval(afterError:count:)` may lead to another attempt, else `didFail`.
@ConveyActor
public protocol DownloadingTask<DownloadPayload>: Sendable {
    /// What a successful run produces: raw `Data` by default, or any `Decodable` type decoded from JSON.
    associatedtype DownloadPayload: Decodable & Sendable = Data

    /// The server the task runs against. Default: `ConveyServer.default`.
    var server: ConveyServer { get }
    /// The path below the server's remote (and its path prefix), such as `"users/42"`.
    var path: String { get }
    /// The HTTP method. Default: `.get`.
    var method: HTTPMethod { get }
    /// Query parameters, percent-encoded so that any character survives. Default: none.
    ///
    /// Parameters are sent sorted by name, so the same task always produces the same URL.
    var queryParameters: [String: String]? { get }
    /// Query items sent in this order after `queryParameters`, percent-encoded the same way: for
    /// repeated names (`?tag=a&tag=b`) or an order the server cares about. An item with a `nil`
    /// value is sent as its name alone. Default: none.
    var queryItems: [URLQueryItem] { get }
    /// The request headers. Default: `server.headers(for: self)`.
    ///
    /// Layered over the server's default headers; a field here replaces one of the same name.
    var headers: Headers { get async throws }
    /// Per-task overrides of timeouts, network access and echo style. Default: `nil`.
    var configuration: TaskConfiguration? { get }
    /// Which statuses throw `HTTPError` and which come back as responses. Default: `.standard`
    /// (every status outside 200–299 throws) while the server's `reportBadHTTPStatusAsError` is
    /// on, `.never` when it is off.
    var statusRule: StatusRule { get }
    /// Whether redirects are followed. Default: the server's `followsRedirects` (`true`).
    ///
    /// When `false`, a redirect (301–303, 305–308) comes back as the response, its `Location`
    /// header unread, unless `statusRule` names its code in `throwingCodes`.
    var followsRedirects: Bool { get }
    /// The decoder for a `Decodable` payload. Default: the server's `defaultDecoder`.
    var decoder: JSONDecoder { get }
    /// The request body. Default: none. Upload tasks provide it from their `uploadPayload`.
    var requestBody: RequestBody? { get async throws }
    /// A tag for `ConveySession.cancel(sessionWithTag:)`. Default: `nil`.
    var sessionTag: String? { get }
    /// The retry policy behind the default `retryInterval(afterError:count:)`. Default: the
    /// server's `retryPolicy` (none unless configured).
    var retryPolicy: RetryPolicy? { get }
    /// How the task uses the server's cache. Default: the server's `defaultCacheStrategy`. See `CacheStrategy`.
    var cacheStrategy: CacheStrategy { get }
    /// Whether responses to requests carrying credentials (`Authorization`, `Cookie`, API keys, URL
    /// user info: see Docs/caching.md) may be stored and reused. They answer only requests with the
    /// same credentials. Default: `true`; `false` makes such requests bypass the cache.
    var cachesAuthorizedResponses: Bool { get }

    /// Steps of the task's own around its run, inside the server's `interceptors`. Default: none.
    /// See `Interceptor`.
    var interceptors: [any Interceptor] { get }
    /// Steps of the task's own around each of its exchanges on the wire, inside the server's
    /// `exchangeInterceptors`. Default: none. See `Interceptor`.
    var exchangeInterceptors: [any Interceptor] { get }

    /// What to echo for this task. Default: the server's `defaultEchoStyle` (`.recorded`).
    var echoStyle: TaskEchoStyle { get }
    /// What to echo for a run that received `data` (`nil` when none arrived). Default: `echoStyle`.
    func echoStyle(for data: Data?) -> TaskEchoStyle

    /// The request type `willSendRequest(request:)` works on: `OutgoingRequest`, inferred from
    /// your hook. A hook written with Foundation's `URLRequest` still works (it is converted each
    /// way), with a deprecation warning that names the signature to use.
    associatedtype HookRequest: HookParameter = OutgoingRequest
    /// The response type `didReceiveResponse(response:data:)` gets: `ResponseHead`, inferred from
    /// your hook. A hook written with Foundation's `HTTPURLResponse` still works, with a
    /// deprecation warning that names the signature to use.
    associatedtype HookResponse: HookParameter = ResponseHead

    /// Called before each attempt is sent; the returned request is the one really sent.
    func willSendRequest(request: HookRequest) async throws -> HookRequest
    /// Called when a response arrives, before its status is checked and its body decoded, with
    /// its head as received (status, fields in order, final URL; `response.httpURLResponse` is
    /// Foundation's form) and the body held in memory (empty for a file or a stream).
    /// Throw to fail the attempt with your own error.
    func didReceiveResponse(response: HookResponse, data: Data) async throws
    /// Called once when a run fails, with the final error (decoding failures included), whatever
    /// the run delivers: `download()`, `download(to:)`, `stream()`, each connection of `events()`.
    func didFail(with error: any Error) async
    /// Called once when a run that returns the task's own payload succeeds, with the decoded
    /// response: `download()`, `send()`, and `FileDownloadingTask.download()`. Runs that deliver
    /// something else (`download(to:)`, `stream()`, `events()`) do not call it; `didSucceed(with:)`
    /// is the hook every successful run calls.
    func didFinish(with response: ServerResponse<DownloadPayload>) async
    /// Called once when a run succeeds, whatever it delivers (after `didFinish(with:)` when that
    /// is called too). `response` is the final exchange: its `data` is the body when the run
    /// keeps it in memory, empty for a file or a stream, whose body is still arriving.
    func didSucceed(with response: ServerResponse<Data>) async
    /// Asked after each failed attempt: how many seconds to wait before trying again, or `nil`
    /// to give up. `count` is the number of attempts made so far. Default: what `retryPolicy` says.
    /// Not asked for cancellations or when the total timeout has passed; a wait that would run
    /// past the total timeout ends the task instead.
    func retryInterval(afterError error: any Error, count: Int) -> TimeInterval?
}

extension DownloadingTask {
    public var server: ConveyServer { ConveyServer.default }
    public var method: HTTPMethod { .get }
    public var queryParameters: [String: String]? { nil }
    public var queryItems: [URLQueryItem] { [] }
    public var headers: Headers {
        get async throws { try await server.headers(for: self) }
    }
    public var configuration: TaskConfiguration? { nil }
    public var statusRule: StatusRule { server.storedConfiguration.reportBadHTTPStatusAsError ? .standard : .never }
    public var followsRedirects: Bool { server.storedConfiguration.followsRedirects }
    public var decoder: JSONDecoder { server.storedConfiguration.defaultDecoder }
    public var requestBody: RequestBody? {
        get async throws { nil }
    }
    public var sessionTag: String? { nil }
    public var retryPolicy: RetryPolicy? { server.storedConfiguration.retryPolicy }
    public var cacheStrategy: CacheStrategy { server.storedConfiguration.defaultCacheStrategy }
    public var cachesAuthorizedResponses: Bool { true }
    public var interceptors: [any Interceptor] { [] }
    public var exchangeInterceptors: [any Interceptor] { [] }
    public var echoStyle: TaskEchoStyle { server.storedConfiguration.defaultEchoStyle }
    public func echoStyle(for data: Data?) -> TaskEchoStyle {
        HookProbe.defaultRan(.echoStyleForData, of: Self.self)
        return echoStyle
    }
    public func willSendRequest(request: HookRequest) async throws -> HookRequest {
        HookProbe.defaultRan(.willSendRequest, of: Self.self)
        return request
    }
    public func didReceiveResponse(response: HookResponse, data: Data) async throws {
        HookProbe.defaultRan(.didReceiveResponse, of: Self.self)
    }
    public func didFail(with error: any Error) async {
        HookProbe.defaultRan(.didFail, of: Self.self)
    }
    public func didFinish(with response: ServerResponse<DownloadPayload>) async {
        HookProbe.defaultRan(.didFinish, of: Self.self)
    }
    public func didSucceed(with response: ServerResponse<Data>) async {
        HookProbe.defaultRan(.didSucceed, of: Self.self)
    }
    public func retryInterval(afterError error: any Error, count: Int) -> TimeInterval? {
        HookProbe.defaultRan(.retryInterval, of: Self.self)
        return retryPolicy?.retryInterval(afterError: error, count: count, method: method)
    }
}

/// A task whose payload is the raw response body.
public protocol DataDownloadingTask: DownloadingTask where DownloadPayload == Data {}

/// The most common kind of task: it downloads raw `Data`.
public typealias ServerTask = DataDownloadingTask

/// A task whose response body is never decoded: any body, even none, is a success. The payload
/// is the body as it came (`Data`), also `ServerResponse.data`.
public protocol IgnoredResultsTask: DownloadingTask where DownloadPayload == Data {}
