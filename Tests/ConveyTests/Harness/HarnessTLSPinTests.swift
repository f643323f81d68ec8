#if os(Linux) || os(macOS)
import Foundation
import Testing

/// `convey-harness tls pin FILE`, against OpenSSL's pipeline.
@Suite("Harness tls pin", .openssl)
struct HarnessTLSPinTests {
    private func pin(_ file: URL) async throws -> HarnessRun {
        let records = RecordsFolder()
        defer { records.remove() }
        return try await HarnessProcess.run(["tls", "pin", file.path(percentEncoded: false)], records: records.url)
    }

    @Test(arguments: CertificateMaterial.KeyType.allCases, ["pem", "der", "pub.pem", "pub.der"])
    func printsWhatOpenSSLsPipelineGives(type: CertificateMaterial.KeyType, form: String) async throws {
        let material = try CertificateMaterial.get()
        let run = try await pin(material.file("\(type.rawValue).\(form)"))
        #expect(run.status == 0)
        #expect(run.stdout == (material.pins[type] ?? "?") + "\n")
        #expect(run.stderr.isEmpty)
    }

    @Test func aFileThatIsNeitherExitsFiveSayingWhatAndWhere() async throws {
        let folder = try OpenSSL.scratchFolder("harness-pin")
        let garbage = folder.appending(path: "garbage.der")
        try Data([0x30, 0x82, 0x01, 0x00, 0x02]).write(to: garbage)
        let run = try await pin(garbage)
        #expect(run.status == 5)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("garbage.der: it is neither PEM nor a DER certificate or public key: the Certificate says it holds 256 bytes, but only 1 follow (at byte 0)"))
    }

    @Test func aMissingArgumentIsAUsageError() async throws {
        let records = RecordsFolder()
        defer { records.remove() }
        let run = try await HarnessProcess.run(["tls", "pin"], records: records.url)
        #expect(run.status == 1)
        #expect(run.stderr.contains("usage: tls pin FILE"))
    }
}
#endif
