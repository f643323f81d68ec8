import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The one way Convey creates and reads its own files: owner-only, never through a link, only
/// regular files, never blocking.
@Suite("Owner-only files")
struct OwnerOnlyFilesTests {
    @Test func missingFoldersAreCreatedOwnerOnlyAndAnExistingOneIsLeftAsItIs() async throws {
        try await withTemporaryFolder { (folder) async throws in
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
            let inner = folder.appending(path: "a/b/c")
            try OwnerOnlyFiles.createFolder(atPath: inner.path)
            #expect(try permissions(of: folder.appending(path: "a")) == 0o700)
            #expect(try permissions(of: folder.appending(path: "a/b")) == 0o700)
            #expect(try permissions(of: inner) == 0o700)
            #expect(try permissions(of: folder) == 0o755)
        }
    }

    @Test func aFileInTheWayOfAFolderIsAnError() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let file = folder.appending(path: "plain")
            try Data().write(to: file)
            #expect(throws: FileFailure.self) { try OwnerOnlyFiles.createFolder(atPath: file.appending(path: "inner").path) }
        }
    }

    @Test func aNewFileIsOwnerOnlyAndAnExistingOneIsNarrowedToTheModeAskedFor() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let created = folder.appending(path: "created"), existing = folder.appending(path: "existing")
            close(try OwnerOnlyFiles.openOrCreate(atPath: created.path).descriptor)
            #expect(try permissions(of: created) == 0o600)
            try Data("kept".utf8).write(to: existing)
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: existing.path)
            let opened = try OwnerOnlyFiles.openOrCreate(atPath: existing.path)
            close(opened.descriptor)
            #expect(opened.size == 4)
            #expect(try permissions(of: existing) == 0o600)
        }
    }

    @Test func aLinkAtThePathIsNeverOpened() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let planted = try PlantedLink(at: folder.appending(path: "file"), victimFolder: folder)
            let failure = #expect(throws: FileFailure.self) { try OwnerOnlyFiles.openOrCreate(atPath: planted.link.path) }
            #expect(failure?.reason.contains("symbolic link") == true)
            #expect(throws: FileFailure.self) { try OwnerOnlyFiles.read(atPath: planted.link.path, limit: 1000) }
            #expect(planted.victimIsUntouched)
        }
    }

    @Test func aFIFOOrAFolderIsRefusedWithoutBlocking() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let fifo = folder.appending(path: "fifo"), directory = folder.appending(path: "directory")
            try makeFIFO(at: fifo)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            for path in [fifo.path, directory.path] {
                let failure = #expect(throws: FileFailure.self) { try OwnerOnlyFiles.read(atPath: path, limit: 1000) }
                #expect(failure?.reason == "it is not a regular file", "\(path)")
                #expect(throws: FileFailure.self) { try OwnerOnlyFiles.openOrCreate(atPath: path) }
            }
        }
    }

    @Test func aFileLargerThanTheLimitIsNotRead() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let file = folder.appending(path: "large")
            try Data(count: 101).write(to: file)
            #expect(throws: FileFailure.self) { try OwnerOnlyFiles.read(atPath: file.path, limit: 100) }
            #expect(try OwnerOnlyFiles.read(atPath: file.path, limit: 101)?.count == 101)
            #expect(try OwnerOnlyFiles.read(atPath: folder.appending(path: "missing").path, limit: 100) == nil)
        }
    }

    @Test func replacingAFileReplacesALinkThereWithoutFollowingIt() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let planted = try PlantedLink(at: folder.appending(path: "record"), victimFolder: folder)
            let temporary = OwnerOnlyFiles.temporaryPath(besides: planted.link.path)
            try Array("new".utf8).withUnsafeBytes { try OwnerOnlyFiles.replace(atPath: planted.link.path, temporaryPath: temporary, with: $0) }
            #expect(planted.victimIsUntouched)
            #expect(!isSymbolicLink(planted.link))
            #expect(try Data(contentsOf: planted.link) == Data("new".utf8))
            #expect(try permissions(of: planted.link) == 0o600)
            #expect(!FileManager.default.fileExists(atPath: temporary))
        }
    }

    @Test func aTemporaryNameAlreadyTakenIsNeverWrittenThrough() async throws {
        try await withTemporaryFolder { (folder) async throws in
            let destination = folder.appending(path: "entry")
            let planted = try PlantedLink(at: folder.appending(path: ".entry.tmp"), victimFolder: folder)
            #expect(throws: FileFailure.self) {
                try Array("new".utf8).withUnsafeBytes { try OwnerOnlyFiles.replace(atPath: destination.path, temporaryPath: planted.link.path, with: $0) }
            }
            #expect(planted.victimIsUntouched)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }
}
