import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// `convey-harness get -o FILE` streams to disk and `-C -` resumes, against the local nginx.
@Suite("Harness downloads", .wire)
struct HarnessDownloadTests {
    @Test func outputStreamsTheBodyToTheFileAndContinueResumesAPartialOne() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "convey-harness-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try #require(TestServers.nginxURL).appending(path: "16m.bin")
        let whole = folder.appending(path: "whole.bin")
        let first = try await HarnessProcess.run(["get", url.absoluteString, "-o", whole.path, "--timings", "--no-progress"], records: folder)
        #expect(first.status == 0)
        #expect(first.stderr.contains("timings: "))
        let original = try Data(contentsOf: whole)
        #expect(original.count == 16 << 20)

        // A partial file of the same version, as a broken transfer leaves it: -C - asks for the rest.
        let resumed = folder.appending(path: "resumed.bin")
        let partial = PartialDownload(destination: resumed)
        try original.prefix(5_000_000).write(to: partial.file)
        let etag = try #require(first.stderr.split(separator: "\n").first { $0.lowercased().hasPrefix("etag:") })
        try partial.saveRecord(.init(url: url.absoluteString, validator: String(etag.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces)))
        let second = try await HarnessProcess.run(["get", url.absoluteString, "-o", resumed.path, "-C", "-", "-v", "--no-progress"], records: folder)
        #expect(second.status == 0)
        #expect(second.stderr.contains("HTTP 206"))
        #expect(second.stderr.contains("> Range: bytes=5000000-"))
        #expect(second.stdout.isEmpty, "with -o, standard output stays free, as curl's")
        #expect(try Data(contentsOf: resumed) == original)
        #expect(!FileManager.default.fileExists(atPath: partial.file.path))
    }
}
