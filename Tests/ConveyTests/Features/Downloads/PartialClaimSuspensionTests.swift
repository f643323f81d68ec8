#if os(Linux)
import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// A download's claim on its partial file let go of for the app's suspension (`FileLocks`) and taken again.
@Suite("Downloads: the claim around a suspension", .enabled(if: FlockProcess.isAvailable, "needs flock(1)"))
struct PartialClaimSuspensionTests {
    private func destination() throws -> (folder: URL, file: URL) {
        let folder = try OpenSSL.scratchFolder("claim")
        return (folder, folder.appending(path: "report.bin"))
    }

    private func write(_ text: String, to claim: PartialClaim, at offset: Int64 = 0) throws {
        let written = Array(text.utf8).withUnsafeBytes { bytes in Result { () throws(FileFailure) in try claim.write(bytes, at: offset) } }
        try written.get()
    }

    @Test func anotherProcessMayLockThePartialFileOnlyWhileReleased() throws {
        let (_, file) = try destination()
        let claim = try PartialDownload(destination: file).claim(permissions: 0o600)
        let path = claim.partial.file.path(percentEncoded: false)
        #expect(try FlockProcess.isLocked(path))
        claim.releaseLock()
        #expect(!(try FlockProcess.isLocked(path)))
        claim.retakeLock()
        #expect(try FlockProcess.isLocked(path))
        #expect(claim.lostReason == nil)
        claim.release()
    }

    @Test func aClaimRetakenWithNoOneElseWritesAndCommits() throws {
        let (_, file) = try destination()
        let claim = try PartialDownload(destination: file).claim(permissions: 0o600)
        try write("before ", to: claim)
        claim.releaseLock()
        try write("during ", to: claim, at: 7)
        claim.retakeLock()
        try write("after", to: claim, at: 14)
        try claim.commit()
        #expect(try String(contentsOf: file, encoding: .utf8) == "before during after")
    }

    @Test func aCommitWhileReleasedTakesTheLockFirst() throws {
        let (_, file) = try destination()
        let claim = try PartialDownload(destination: file).claim(permissions: 0o600)
        try write("whole", to: claim)
        claim.releaseLock()
        try claim.commit()
        #expect(try String(contentsOf: file, encoding: .utf8) == "whole")
    }

    @Test func aClaimAnotherDownloadTookMeanwhileIsLostAndLeavesItsFileAlone() throws {
        let (_, file) = try destination()
        let first = try PartialDownload(destination: file).claim(permissions: 0o600)
        try write("first", to: first)
        first.releaseLock()
        let second = try PartialDownload(destination: file).claim(permissions: 0o600)
        first.retakeLock()
        let reason = try #require(first.lostReason)
        #expect(reason.hasPrefix("another download took the partial file"))
        #expect(throws: FileFailure.self) { try write("more", to: first) }
        let failure = #expect(throws: ConveyError.self) { try first.commit() }
        #expect(failure?.downloadFailure?.reason == reason)
        first.release()
        // The second download's file is untouched by the first's failure.
        try write("second", to: second)
        try second.commit()
        #expect(try String(contentsOf: file, encoding: .utf8) == "second")
    }

    @Test func aClaimTakenWhileLocksAreReleasedIsReleasedToo() async throws {
        let registry = FileLockRegistry()
        await registry.releaseAll()
        let (_, file) = try destination()
        let claim = try PartialDownload(destination: file).claim(permissions: 0o600)
        registry.register(claim)
        try await waitUntil("the new claim is let go of") { !((try? FlockProcess.isLocked(claim.partial.file.path(percentEncoded: false))) ?? true) }
        await registry.retakeAll()
        #expect(try FlockProcess.isLocked(claim.partial.file.path(percentEncoded: false)))
        claim.release()
    }
}
#endif
