import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The last step of a WebSocket's handshake run, in place of the transport's: opens a byte stream
/// on the server's transport (`WebSocketWires`: TCP, TLS and proxy as its requests get them),
/// writes the request as HTTP/1.1, reads the answer's head, and returns it as the exchange, so
/// that every step above (redirects, the app's exchange steps, tracing, HAR capture) and the
/// run's status rule and credential refresh see the handshake as any other exchange.
///
/// A 101's body is the connection's bytes after the head, a stream the connection pulls
/// (`WebSocketWireBody`), whose end is the connection's end; the stream itself goes to the run's
/// delivery through the run's values (`WebSocketHandoff`). Any other answer's body is read whole
/// (up to 64 KiB) for its `HTTPError`, and its connection closed.
///
/// A task that is a `WebSocketTask` run any other way than `connect()` ends here, before
/// anything is sent, with `ConveyError.webSocket(.notARequest, …)`.
struct WebSocketUpgradeStep: ChainStep {
    /// The step of a run of `task` started as `start`, or `nil` for a run that is no WebSocket's.
    init?<Task: DownloadingTask>(task: Task, start: RunStart) {
        guard start.values[WebSocketHandoff.self] != nil || task is any WebSocketTask else { return nil }
    }

    func intercept(_ request: TransportRequest, context: StepContext, next: ChainNext) async throws -> Exchange {
        guard let handoff = context.run[WebSocketHandoff.self] else {
            throw ConveyError.webSocket(.notARequest, url: request.request.url, closeCode: nil,
                                        reason: "\(context.run.taskType) is a WebSocketTask: open it with connect(), "
                                            + "not download(), send(), stream() or events()")
        }
        // The observers hear of the handshake as they do of any exchange on the wire.
        return try await context.observingExchange(of: request) { try await open(request, context: context, handoff: handoff) }
    }

    /// Connects, sends the handshake and reads the answer's head, in a task the run's stops cancel.
    private func open(_ request: TransportRequest, context: StepContext, handoff: WebSocketHandoff) async throws -> Exchange {
        let plan = context.plan
        let url = request.request.url
        let timeout = request.timeout
        do {
            let answer = try await request.cancellation.inTaskOfItsOwn {
                try await Self.handshake(request.request, over: plan.transport, headLimit: plan.headSizeLimit, timeout: timeout, clock: plan.clock)
            }
            guard answer.head.statusCode == 101 else {
                return Exchange(request: request.request, head: answer.head, body: .data(answer.refusedBody))
            }
            let body = WebSocketWireBody(wire: answer.wire, leftover: answer.leftover, url: url, timeout: timeout)
            handoff.offer(WebSocketHandoff.Opened(body: body, wire: answer.wire, context: context))
            return Exchange(request: request.request, head: answer.head, body: .stream(body))
        } catch {
            throw TransportErrors.map(error, url: url, timeout: timeout)
        }
    }

    /// What came back: the head, the bytes after it, and the stream (a 101) or the body (any other answer).
    private struct Answer: Sendable {
        let head: ResponseHead
        let leftover: [UInt8]
        let wire: any WebSocketWire
        let refusedBody: Data
    }

    /// The handshake on a stream of its own: each read must bring bytes within `timeout`, else the
    /// stream closes and the attempt fails as timed out.
    private static func handshake(_ request: OutgoingRequest, over transport: any ConveyTransport, headLimit: Int, timeout: Duration,
                                  clock: any RunClock) async throws -> Answer {
        let url = request.url
        let wire = try await WebSocketWires.open(url, sending: WebSocketOpening.head(of: request), on: transport, connectTimeout: timeout)
        let watch = IdleWatch(wire: wire, timeout: timeout, clock: clock)
        do {
            var reader = WebSocketResponseHeadReader(url: url, limit: headLimit)
            while true {
                guard let bytes = try await watch.read() else {
                    throw URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: "the server closed the connection before answering the handshake",
                                                                      NSURLErrorFailingURLErrorKey: url])
                }
                let read: (head: ResponseHead, rest: [UInt8])?
                do throws(WebSocketHandshakeError) {
                    read = try reader.read(bytes)
                } catch .responseHeadTooLarge(let limit) {
                    throw ConveyError.responseTooLarge(limit: Int64(limit), url: url, isHead: true)
                } catch {
                    throw ConveyError.transport(.malformedResponse, url: url, code: URLError.Code.cannotParseResponse.rawValue, reason: error.description)
                }
                guard let (head, rest) = read else { continue }
                guard head.statusCode == 101 else {
                    let body = await WebSocketOpening.refusedBody(of: head, leftover: rest) { try await watch.read() }
                    wire.close()
                    return Answer(head: head, leftover: [], wire: wire, refusedBody: body)
                }
                return Answer(head: head, leftover: rest, wire: wire, refusedBody: Data())
            }
        } catch {
            wire.close()
            if watch.timedOut { throw URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: url]) }
            throw error
        }
    }
}

/// Reads a stream while a timer runs, closing the stream when no bytes came within the timeout.
private final class IdleWatch: Sendable {
    private let wire: any WebSocketWire
    private let timeout: Duration
    private let clock: any RunClock
    private let expired = InlineLocked(false)

    init(wire: any WebSocketWire, timeout: Duration, clock: any RunClock) {
        self.wire = wire
        self.timeout = timeout
        self.clock = clock
    }

    /// Whether a read timed out (and closed the stream).
    var timedOut: Bool { expired.value }

    /// The next bytes, within the timeout.
    func read() async throws -> [UInt8]? {
        let deadline = clock.now + timeout
        let timer = Task { [self] in
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            expired.set(true)
            wire.close()
        }
        defer { timer.cancel() }
        return try await wire.read()
    }
}
