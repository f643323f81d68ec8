import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A step of the app's (`Interceptor`) in the chain: the request as an `OutgoingRequest`, the
/// response as a `ServerResponse<Data>`, what it throws as it was thrown.
struct AppStep: ChainStep {
    let interceptor: any Interceptor

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        let response = try await interceptor.intercept(request.request) { changed in
            // What the step changed is checked like any request; what it passed on unchanged was already.
            if changed != request.request { try FieldValidation.check(changed, source: .interceptor) }
            var forwarded = request
            forwarded.request = changed
            let exchange = try await next(forwarded, context)
            return ServerResponse(payload: exchange.body.inMemory ?? Data(), exchange: exchange)
        }
        return response.chainExchange
    }
}
