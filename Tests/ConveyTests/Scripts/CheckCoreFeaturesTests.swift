import Foundation
import Testing

/// `scripts/check-core-features`, run on a tree of its own: it fails, naming the file and line,
/// when the core names a type a feature declares (Core/Server may name only the settings a
/// server's configuration holds), or calls into a feature through a property of a feature's type.
@Suite("scripts/check-core-features")
struct CheckCoreFeaturesTests {
    private static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private func check(_ root: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["python3", Self.packageRoot.appending(path: "scripts/check-core-features").path(percentEncoded: false),
                             root.path(percentEncoded: false)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    private func tree(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appending(path: "convey-core-check-\(UUID().uuidString)")
        for (path, text) in files {
            let file = root.appending(path: path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return root
    }

    @Test func aCoreFileNamingAFeatureTypeFailsWithItsFileAndLine() throws {
        let root = try tree([
            "Sources/Convey/Features/Gadgets/Gadget.swift": "public struct Gadget {}\nstruct GadgetPart { struct Nested {} }\n",
            "Sources/Convey/Core/Pipeline/Runner.swift": "// A Gadget in a comment is not code.\nlet label = \"Gadget\"\nlet gadget = Gadget()\n",
            "Sources/Convey/Core/Server/Settings.swift": "var gadget: Gadget?\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 1)
        #expect(result.output.contains("Sources/Convey/Core/Pipeline/Runner.swift:3: Gadget (declared in Sources/Convey/Features/Gadgets/Gadget.swift:1)"))
        #expect(!result.output.contains("Runner.swift:1"))
        #expect(!result.output.contains("Runner.swift:2"))
        #expect(!result.output.contains("Nested ("))
    }

    @Test func theServerMayNameASettingTypeButNoOtherFeatureType() throws {
        let root = try tree([
            "Sources/Convey/Features/Cache/DataCache.swift": "public final class DataCache {}\n",
            "Sources/Convey/Features/Gadgets/Gadget.swift": "final class Gadget {}\n",
            "Sources/Convey/Core/Server/Settings.swift": "public var cache: DataCache?\nlet gadget = Gadget()\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 1)
        #expect(result.output.contains("Sources/Convey/Core/Server/Settings.swift:2: Gadget (declared in Sources/Convey/Features/Gadgets/Gadget.swift:1)"))
        #expect(!result.output.contains("Settings.swift:1"))
    }

    /// What named no feature type but reached a feature's machinery through the server: the
    /// runner calling the credential refresh, a feature's, through `server.credentialRefresh`.
    @Test func aCallIntoAFeatureThroughAPropertyFailsWhereverItIs() throws {
        let root = try tree([
            "Sources/Convey/Features/Retry/CredentialRefresh.swift": "final class CredentialRefresh { func refresh() {} }\n",
            "Sources/Convey/Features/Transports/BuiltInTransport.swift": "enum BuiltInTransport { func make() {} }\n",
            "Sources/Convey/Core/Server/Server.swift": "let credentialRefresh = CredentialRefresh()\nvar builtInTransport: BuiltInTransport\n",
            "Sources/Convey/Core/Pipeline/Runner.swift": "await server.credentialRefresh.refresh()\nlet transport = configuration.builtInTransport.make()\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 1)
        #expect(result.output.contains("Sources/Convey/Core/Pipeline/Runner.swift:1: .credentialRefresh.refresh calls into CredentialRefresh"))
        // The server making its built-in transport is the one call into a setting the script allows, with its reason.
        #expect(!result.output.contains("Runner.swift:2"))
    }

    @Test func aCoreNamingNoFeatureTypePasses() throws {
        let root = try tree([
            "Sources/Convey/Features/Gadgets/Gadget.swift": "public struct Gadget {}\n",
            "Sources/Convey/Core/Pipeline/Runner.swift": "protocol Stage {}\nlet gadgets = 0\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 0)
        #expect(result.output.contains("Core names none of the 1 types Features declares"))
    }

    @Test func thisPackagesCoreNamesNoFeatureType() throws {
        let result = try check(Self.packageRoot)
        #expect(result.status == 0, "\(result.output)")
    }
}
