import Foundation

/// Posts OTLP/HTTP JSON bodies to a collector through a Convey server of its own: no tracing (so
/// the exporter's requests are never traced), no echo, no retries of Convey's (the exporter
/// retries as the OTLP specification says), every status returned as a response.
final class OTLPSender: Sendable {
    /// `POST` goes here: the collector's `/v1/traces` or `/v1/metrics`.
    let endpoint: URL
    private let headers: Headers
    private let timeout: Duration
    private let server = Locked<ConveyServer?>(nil)

    /// What a post came to.
    enum Outcome: Sendable, Equatable {
        /// The collector took the spans or metrics (2xx).
        case delivered
        /// A failure the specification says to retry (429, 502, 503, 504, no connection, a
        /// timeout), after the collector's `Retry-After` when it gave one.
        case retry(after: Duration?)
        /// A failure that retrying does not mend (another status): the batch is dropped.
        case rejected
    }

    /// A sender to `endpoint`.
    init(endpoint: URL, headers: Headers, timeout: Duration) {
        self.endpoint = endpoint
        self.headers = headers
        self.timeout = timeout
    }

    /// Where `signal` (`traces`, `metrics`) goes at `collector`: its `/v1/traces` or `/v1/metrics`. A
    /// collector URL that already ends with either is taken as the collector's with that path.
    static func endpoint(collector: URL, signal: String) -> URL {
        let path = collector.path(percentEncoded: true)
        for known in ["/v1/traces", "/v1/metrics"] where path.hasSuffix(known) {
            guard known != "/v1/" + signal else { return collector }
            return collector.deletingLastPathComponent().appending(path: signal)
        }
        return collector.appending(path: "v1/\(signal)")
    }

    /// Posts `body`.
    func post(_ body: Data) async -> Outcome {
        let server = await sendingServer()
        do {
            let response = try await OTLPPostTask(server: server, uploadPayload: body).download()
            switch response.statusCode {
            case 200..<300:
                return .delivered
            case 429, 502, 503, 504:
                let delay = response.header("Retry-After").flatMap { RetryAfter.seconds(from: $0, now: Date()) }
                return .retry(after: delay.map { .milliseconds(Int64(($0 * 1000).rounded())) })
            default:
                return .rejected
            }
        } catch ConveyError.invalidURL(_, _), ConveyError.transport(.unsupportedURL, _, _, _) {
            return .rejected
        } catch {
            return .retry(after: nil)
        }
    }

    /// The server posts go through, made on first use.
    @ConveyActor
    private func sendingServer() -> ConveyServer {
        if let made = server.value { return made }
        var configuration = ServerConfiguration(reportBadHTTPStatusAsError: false, defaultTimeout: timeout, defaultTotalTimeout: timeout,
                                                defaultHeaders: headers, defaultEchoStyle: [])
        configuration.failsAllRequests = false
        configuration.coalescesRequests = false
        let made = ConveyServer(remote: Remote(name: "otlp", url: endpoint), configuration: configuration)
        server.value = made
        return made
    }
}

/// One `POST` of an OTLP/HTTP JSON body.
private struct OTLPPostTask: DataUploadingTask {
    typealias DownloadPayload = Data
    let server: ConveyServer
    let uploadPayload: Data?
    var path: String { "" }
    var method: HTTPMethod { .post }
    var contentType: String { "application/json" }
}
