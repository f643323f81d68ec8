import Foundation
import Testing

/// `scripts/check-core-features`, run on a tree of its own: it fails, naming the file and line,
/// when the core outside Core/Server names a type a feature declares.
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
        #expect(!result.output.contains("Settings.swift"))
        #expect(!result.output.contains("Nested ("))
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
