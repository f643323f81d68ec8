import Foundation

/// The ceiling: libcurl's multi interface driven from one thread by a C program
/// (Harness/Benchmarks/CurlCeiling/curl_ceiling.c), run as a child process per batch with the
/// same connection limit as `CurlTransport`. scripts/bench compiles it and passes its path in
/// `CONVEY_CURL_CEILING`.
enum CurlCeiling {
    static let clientName = "libcurl multi, C loop (ceiling)"
    /// `CurlTransport`'s default connections per host.
    static let connections = 6
    /// `CurlTransport`'s default requests at once over one HTTP/2 connection (`maximumStreamsPerHost`).
    static let streamsPerConnection = 100

    /// The compiled program, or why there is none.
    static func executable(environment: [String: String]) -> Result<URL, BenchError> {
        guard let path = environment["CONVEY_CURL_CEILING"], !path.isEmpty else {
            return .failure(.ceilingUnavailable("CONVEY_CURL_CEILING is not set (scripts/bench compiles the C loop and sets it)"))
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            return .failure(.ceilingUnavailable("\(path) is not an executable"))
        }
        return .success(URL(filePath: path))
    }

    /// A client that runs each batch in the C program, which measures itself: `options` such as
    /// `--cacert FILE --http2`, at most `connections` requests at once.
    static func client(executable: URL, url: URL, options: [String] = [], connections: Int = connections) -> Client {
        Client(name: clientName, inProcess: false) { requests, concurrency in
            let output = try await run(executable, arguments: options + [url.absoluteString, String(requests), String(concurrency), String(connections)])
            return try parse(output)
        }
    }

    /// Runs the program to its end and returns its standard output; its standard error passes through.
    private static func run(_ executable: URL, arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        // The program prints one short line, far below a pipe's buffer, so reading after it
        // exits cannot block it.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw BenchError.badResponse("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return text
    }

    /// Reads `requests=N seconds=S cpu_us_per_request=C context_switches_per_request=X p50_us=P p99_us=Q
    /// loop_cpu_us_per_request=L` and, when the allocation counter was preloaded, `allocations_per_request=A`.
    static func parse(_ line: String) throws -> Measurement {
        var values: [String: Double] = [:]
        for pair in line.split(whereSeparator: \.isWhitespace) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        guard let requests = values["requests"], requests > 0, let seconds = values["seconds"], seconds > 0,
              let cpu = values["cpu_us_per_request"], let switches = values["context_switches_per_request"],
              let p50 = values["p50_us"], let p99 = values["p99_us"] else {
            throw BenchError.badResponse("unexpected output from the C loop: \(line)")
        }
        return Measurement(requestsPerSecond: requests / seconds, p50: p50, p99: p99, cpuPerRequest: cpu,
                           contextSwitchesPerRequest: switches, coresUsed: cpu * requests / 1e6 / seconds,
                           allocationsPerRequest: values["allocations_per_request"],
                           loopCPUPerRequest: values["loop_cpu_us_per_request"])
    }
}
