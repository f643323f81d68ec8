import Foundation

/// A step of your own around requests: it gets the request and the rest of the chain (`next`),
/// and returns the response. With it an app signs requests, limits its rate per host, stops
/// calling a failing host for a while, times its exchanges or answers from memory, for every
/// task of a server at once.
///
/// ```swift
/// struct Signing: Interceptor {
///     let key: SigningKey
///     func intercept(_ request: OutgoingRequest,
///                    next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
///         var signed = request
///         signed.setValue(key.signature(of: request), forHTTPHeaderField: "Signature")
///         return try await next(signed)
///     }
/// }
///
/// configuration.exchangeInterceptors = [Signing(key: key)]
/// ```
///
/// A step may change the request before it calls `next`, look at the response `next` returns
/// or return another (`ServerResponse(answering:statusCode:headers:body:)`,
/// `replacing(head:)`, `replacing(data:)`, `replacing(body:)`), wrap its body as it goes up
/// (`body.observed(chunk:end:)`, `body.mapChunks(_:)`), answer on its own without calling
/// `next`, wait, or throw. What it returns is what the steps above it and the run get. What it throws reaches the task's `didFail(with:)` and the server's
/// `didFinish(task:response:error:)` as it is, never wrapped; what `next` throws is a
/// `ConveyError` or an `HTTPError`, as the task would see it.
///
/// Steps go in one of two places, in the order configured, the server's outermost and then the
/// task's own (`DownloadingTask.interceptors`, `exchangeInterceptors`):
/// - **around the run** (`ServerConfiguration.interceptors`): called once per run, with the
///   request as built for the first attempt (after `willSendRequest`); `next` makes every
///   attempt, retry, credential refresh and redirect, and returns the run's final response or
///   throws its final error. A change to the request holds for every attempt: a retry rebuilds
///   the request (fresh credentials, the body again) and applies the same changes.
/// - **around each exchange on the wire** (`ServerConfiguration.exchangeInterceptors`): called
///   once for every attempt and every redirect hop, with the request exactly as it goes out,
///   credentials included, after the cross-origin redirect rules dropped those that may not
///   follow a hop. The cache and HAR fixtures answer before these steps: they see only what
///   reaches the network.
///
/// A step runs in the run's own task (the caller's), off `@ConveyActor`: the caller's cancellation
/// ends its waits at once. Its waits count toward the run's total timeout: a stop from elsewhere
/// (the deadline, a tag) ends the run as soon as the step goes on. The response's `data` is the
/// body when the run keeps it in memory (`download()`, `send()`); for a download to a file or a
/// stream it is empty and `body` is the body as it arrives, which whatever sits at the top reads
/// (the file writer, your loop). Around the run, a download's body is in its file already (each
/// attempt writes it): a body a step there hands on of its own is written to the file instead.
/// See Docs/interceptors.md, "What a step may do with a body".
public protocol Interceptor: Sendable {
    /// Handles `request`: pass it (changed or not) to `next` and return what comes back (looked at
    /// or replaced), or return a response of your own without calling `next`.
    func intercept(_ request: OutgoingRequest,
                   next: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data>
}
