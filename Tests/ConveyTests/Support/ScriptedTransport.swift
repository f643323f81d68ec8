import Foundation
@testable import Convey

/// A stub transport that answers from a script, one step per request, repeating the last step.
final class ScriptedTransport: @unchecked Sendable {
    enum Step: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "")
        case fail(URLError.Code)
        case hang
    }

    private let lock = NSLock()
    private var steps: [Step]
    private var served = 0

    init(_ steps: [Step]) { self.steps = steps }

    var requestCount: Int { lock.withLock { served } }

    var transport: StubTransport {
        StubTransport { [self] request in
            let step = lock.withLock { () -> Step in
                served += 1
                return steps.count > 1 ? steps.removeFirst() : steps[0]
            }
            let url = request.urlRequest.url ?? URL(fileURLWithPath: "/")
            switch step {
            case .status(let code, let headers, let body):
                return TransportResponse(url: url, statusCode: code, headers: headers, body: Data(body.utf8))
            case .fail(let code):
                throw URLError(code)
            case .hang:
                try await Task.sleep(for: .seconds(60))
                throw URLError(.timedOut)
            }
        }
    }
}
