import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's steps around each exchange on the wire (`ServerConfiguration.exchangeInterceptors`,
/// then the task's): every hop of every attempt goes through them, outermost first, after
/// redirects and the cache and before the stages nearest the wire.
///
/// Where the run keeps its body in memory, each call of `next` collects its response in memory
/// and the response the outermost step returns is what goes on to the delivery's sink, so a step
/// may replace it, or call `next` again. For a download to a file or a stream the rest of the
/// chain delivers straight into the sink: a step sees the head and an empty body, what it returns
/// after calling `next` is not used, and `next` goes to the network once.
struct InterceptorStage: ExchangeStage {
    let steps: [any Interceptor]

    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange {
        let plan = attempt.plan
        let buffers = plan.keepsBodyInMemory
        var passedThrough: SentExchange?

        /// The rest of the chain as the innermost step's `next`: its errors as the task would see them.
        func rest(_ request: OutgoingRequest) async throws -> ServerResponse<Data> {
            try FieldValidation.check(request, source: .interceptor)
            var forwarded = hop
            forwarded.request = request
            do {
                if buffers {
                    let body = InMemoryBody(limit: plan.sizeLimit, url: request.url)
                    let sent = try await next.send(forwarded, into: body, attempt: attempt)
                    let (head, data) = try body.collected()
                    return ServerResponse(payload: data, exchange: Exchange(
                        request: sent.request, head: head, body: data, metrics: sent.metrics, cacheStatus: sent.cacheStatus, attemptNumber: attempt.number))
                }
                guard passedThrough == nil else {
                    throw ConveyError.transport(.other, url: request.url, code: -1, reason: "an exchange interceptor called next a second time, "
                                                + "but a download to a file or a stream gets one response: its body went to its destination the first time")
                }
                let heads = HeadCatcher(sink)
                let sent = try await next.send(forwarded, into: heads, attempt: attempt)
                passedThrough = sent
                guard let head = heads.head else { throw URLError(.badServerResponse) }
                return ServerResponse(payload: Data(), exchange: Exchange(
                    request: sent.request, head: head, body: Data(), metrics: sent.metrics, cacheStatus: sent.cacheStatus, attemptNumber: attempt.number))
            } catch {
                throw TransportErrors.map(error, url: request.url, timeout: plan.idleTimeout)
            }
        }

        func step(_ index: Int, _ request: OutgoingRequest) async throws -> ServerResponse<Data> {
            guard index < steps.count else { return try await rest(request) }
            do {
                return try await steps[index].intercept(request) { request in try await step(index + 1, request) }
            } catch let failure as StepFailure {
                throw failure
            } catch {
                throw StepFailure(error: error)
            }
        }

        let response = try await step(0, hop.request)
        if let passedThrough { return passedThrough }
        try await sink.takeWhole(TransportResponse(head: response.head, data: response.data, metrics: response.metrics))
        return SentExchange(request: response.request, metrics: response.metrics, cacheStatus: response.cacheStatus)
    }
}

/// What an interceptor threw, carried unchanged through the stages and the runner's mapping of
/// transport errors, so that it reaches the task's hooks as it was thrown.
struct StepFailure: Error {
    let error: any Error
}

/// Passes a response on to a sink, keeping its head for the step that asked for it.
private final class HeadCatcher: ResponseBodySink {
    private let sink: any ResponseBodySink
    private let caught = InlineLocked<ResponseHead?>(nil)

    init(_ sink: any ResponseBodySink) {
        self.sink = sink
    }

    /// The head the sink received, once it has.
    var head: ResponseHead? { caught.value }

    func receive(_ head: ResponseHead) throws {
        caught.set(head)
        try sink.receive(head)
    }

    func offer(_ bytes: UnsafeRawBufferPointer) throws -> Bool { try sink.offer(bytes) }

    func whenReady(_ resume: @escaping @Sendable () -> Void) { sink.whenReady(resume) }

    var needsBackPressure: Bool { sink.needsBackPressure }
}
