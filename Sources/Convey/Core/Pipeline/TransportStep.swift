import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The last step of every chain: the server's transport, and the exchange on the wire as the run's
/// observers see it.
///
/// Where the run keeps its body in memory, the body is collected whole, within the run's size
/// limit, and passed up as one value. Otherwise the transport's `send` runs in a task of its own
/// (`StreamTransfer`), the step returns as soon as the head arrives, and the body goes up as a
/// stream that whatever sits at the top pulls; while nobody pulls, the buffer fills and the
/// transfer pauses.
///
/// What a transport throws is mapped onto Convey's errors here, where it happens, so every step
/// above sees a `ConveyError` (or an error a step threw itself, unchanged). A transport that
/// registers its own cancellation with the run (`ExchangeCancellation`) runs in the run's task,
/// with no thread or task of its own; any other runs in a task of its own that the run's stop
/// cancels, since cancellation of its task is all such a transport hears.
struct TransportStep: ChainStep {
    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        try await context.observingExchange(of: request) { try await send(request, context: context) }
    }

    /// The response: with its body collected in memory where the run keeps it there, else once its
    /// head arrived, its body a stream still arriving. What the transport throws is mapped here.
    private func send(_ request: TransportRequest, context: StepContext) async throws -> Exchange {
        let plan = context.plan
        guard plan.keepsBodyInMemory else {
            do {
                return try await streamed(request, plan: plan)
            } catch {
                throw TransportErrors.map(error, url: request.request.url, timeout: plan.idleTimeout)
            }
        }
        let body = InMemoryBody(limit: plan.sizeLimit, url: request.request.url, followsRedirects: plan.redirects.follows)
        do {
            let metrics = try await send(request, over: plan.transport, into: body)
            let (head, data) = try body.collected()
            return Exchange(request: request.request, head: head, body: .data(data), metrics: metrics)
        } catch let ended as InMemoryBody.RedirectBodyEnded {
            // A redirect whose body was too long to drop ended its own transfer: it is followed all the same.
            guard let head = try? body.collected().head else { throw ended }
            return Exchange(request: request.request, head: head, body: .empty)
        } catch {
            throw TransportErrors.map(error, url: request.request.url, timeout: plan.idleTimeout)
        }
    }

    /// The response once its head arrived, its body a stream still arriving.
    private func streamed(_ request: TransportRequest, plan: RunPlan) async throws -> Exchange {
        // The transfer runs in a task of its own, which the run's stop ends through the transfer.
        var streaming = request
        streaming.cancellation = .none
        let transport = plan.transport
        let transfer = StreamTransfer(url: request.request.url, timeout: plan.idleTimeout, capacity: plan.bufferSize,
                                      readerKeepsPace: plan.readsBodyItself) { [streaming] sink in
            try await transport.send(streaming, into: sink)
        }
        guard request.cancellation.register(transfer) else {
            transfer.close()
            throw CancellationError()
        }
        let head: ResponseHead
        do {
            head = try await transfer.head()
        } catch {
            transfer.close()
            throw error
        }
        return Exchange(request: request.request, head: head, body: .stream(transfer))
    }

    private func send(_ request: TransportRequest, over transport: any ConveyTransport, into sink: any ResponseBodySink) async throws -> ExchangeMetrics {
        if transport.registersExchangeCancellation || request.cancellation.run == nil {
            return try await transport.send(request, into: sink)
        }
        return try await request.cancellation.inTaskOfItsOwn { [request] in try await transport.send(request, into: sink) }
    }
}
