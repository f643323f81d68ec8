import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's steps around each exchange on the wire (`ServerConfiguration.exchangeInterceptors`,
/// then the task's): every hop of every attempt goes through them, outermost first, after
/// redirects and the cache and before the stages nearest the wire.
///
/// Where the run keeps its body in memory, the rest of the chain delivers into the delivery's
/// sink, which holds the whole response: a step sees it, and what the outermost step returns in
/// its place (a changed response, an answer of its own) replaces it there; `next` may be called
/// again. For a download to a file or a stream the body goes to its destination as it arrives: a
/// step sees the head and an empty body, what it returns after calling `next` is not used, and
/// `next` goes to the network once.
struct InterceptorStage: ExchangeStage {
    let steps: [any Interceptor]

    func send(_ hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest) async throws -> SentExchange {
        var passedThrough: (sent: SentExchange, call: UInt64)?
        let response = try await step(0, hop.request) { request in
            try await rest(request, hop: hop, into: sink, attempt: attempt, next: next, passedThrough: &passedThrough)
        }
        // What the sink holds stays, unless a step returned something else in a sink that can take it.
        if let passedThrough, !(sink is any WholeResponseSink) || response.exchange.passedOnBy == passedThrough.call {
            return passedThrough.sent
        }
        try await sink.takeWhole(TransportResponse(head: response.head, data: response.data, metrics: response.metrics))
        return SentExchange(request: response.request, metrics: response.metrics, cacheStatus: response.cacheStatus)
    }

    /// Step `index` and those after it, the last of which passes the request to `rest`.
    private func step(_ index: Int, _ request: OutgoingRequest,
                      rest: (OutgoingRequest) async throws -> ServerResponse<Data>) async throws -> ServerResponse<Data> {
        guard index < steps.count else { return try await rest(request) }
        do {
            return try await steps[index].intercept(request) { request in try await step(index + 1, request, rest: rest) }
        } catch let failure as StepFailure {
            throw failure
        } catch {
            throw StepFailure(error: error)
        }
    }

    /// The rest of the chain as the innermost step's `next`: the response as the sink holds it (the
    /// head alone for a body that goes elsewhere), errors as the task would see them.
    private func rest(_ request: OutgoingRequest, hop: Hop, into sink: any ResponseBodySink, attempt: AttemptContext, next: ExchangeChain.Rest,
                      passedThrough: inout (sent: SentExchange, call: UInt64)?) async throws -> ServerResponse<Data> {
        let plan = attempt.plan
        do {
            try FieldValidation.check(request, source: .interceptor)
            var forwarded = hop
            forwarded.request = request
            let head: ResponseHead
            let body: Data
            let sent: SentExchange
            if let whole = sink as? any WholeResponseSink {
                sent = try await next.send(forwarded, into: whole, attempt: attempt)
                guard let held = whole.held else { throw URLError(.badServerResponse) }
                (head, body) = held
            } else {
                guard passedThrough == nil else {
                    throw ConveyError.transport(.other, url: request.url, code: -1, reason: "an exchange interceptor called next a second time, "
                                                + "but a download to a file or a stream gets one response: its body went to its destination the first time")
                }
                let heads = HeadCatcher(sink)
                sent = try await next.send(forwarded, into: heads, attempt: attempt)
                guard let caught = heads.head else { throw URLError(.badServerResponse) }
                (head, body) = (caught, Data())
            }
            let call = (passedThrough?.call ?? 0) + 1
            passedThrough = (sent, call)
            var exchange = Exchange(request: sent.request, head: head, body: body, metrics: sent.metrics, cacheStatus: sent.cacheStatus,
                                    attemptNumber: attempt.number)
            // Marks the response the sink holds: returned unchanged, it stays there as it is.
            exchange.passedOnBy = call
            return ServerResponse(payload: body, exchange: exchange)
        } catch {
            throw TransportErrors.map(error, url: request.url, timeout: plan.idleTimeout)
        }
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
