import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct PingTask: ServerTask {
    let server: ConveyServer
    var path: String { "ping" }
}

/// The files a recorder creates and reads: owner-only, and never a link or a FIFO.
@Suite("Record files", .timeLimit(.minutes(5)))
@ConveyActor
struct RecordFilesTests {
    private func recordOne(into recorder: TaskRecorder) async throws {
        let server = try stubServer(.answering(body: "pong")) { $0.recorder = recorder }
        try await PingTask(server: server).send()
        await recorder.flush()
    }

    @Test func theFolderAndEveryRecordAreOwnerOnly() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let records = folder.appending(path: "new/records")
            let recorder = TaskRecorder(folder: records)
            try await recordOne(into: recorder)
            let names = try FileManager.default.contentsOfDirectory(atPath: records.path)
            #expect(names.count == 1)
            #expect(recorder.lastWriteFailure == nil)
            #expect(try permissions(of: folder.appending(path: "new")) == 0o700)
            #expect(try permissions(of: records) == 0o700)
            for name in names { #expect(try permissions(of: records.appending(path: name)) == 0o600) }
        }
    }

    @Test func aRecordThatIsALinkIsNotReadAndItsTargetIsLeftAlone() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let records = folder.appending(path: "records"), outside = folder.appending(path: "outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let recorder = TaskRecorder(folder: records)
            try await recordOne(into: recorder)
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: records.path).first)
            // The link points at a sound record kept outside the folder.
            let victim = outside.appending(path: name)
            try FileManager.default.moveItem(at: records.appending(path: name), to: victim)
            let before = try Data(contentsOf: victim)
            try FileManager.default.createSymbolicLink(at: records.appending(path: name), withDestinationURL: victim)

            #expect(await recorder.records().isEmpty)
            #expect(await recorder.unreadableRecordIDs() == [String(name.dropLast(".json".count))])
            #expect(try Data(contentsOf: victim) == before)
        }
    }

    @Test func aFIFONamedLikeARecordIsSkippedWithoutBlocking() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let records = folder.appending(path: "records")
            let recorder = TaskRecorder(folder: records)
            try await recordOne(into: recorder)
            try makeFIFO(at: records.appending(path: "20250101T000000000Z-00000000.json"))
            let found = await recorder.records()
            #expect(found.count == 1)
            #expect(found.first?.url?.hasSuffix("/ping") == true)
        }
    }
}
