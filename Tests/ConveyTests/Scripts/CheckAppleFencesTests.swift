import Foundation
import Testing

/// `scripts/check-apple-fences`, run on fixture files of its own: it reads Swift, C and header
/// files, evaluates their `#if`s as each Apple platform would, and names every Linux-only name left
/// where one of them compiles it.
@Suite("scripts/check-apple-fences")
struct CheckAppleFencesTests {
    private static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private func check(_ folder: URL?) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["python3", Self.packageRoot.appending(path: "scripts/check-apple-fences").path(percentEncoded: false)]
            + (folder.map { [$0.path(percentEncoded: false)] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// A folder holding `files`, removed by the caller.
    private func folder(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appending(path: "convey-fences-\(UUID().uuidString)")
        for (path, text) in files {
            let file = root.appending(path: path)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return root
    }

    /// The lines of `output` that report `file`, without the folder before it.
    private func reports(_ output: String, in file: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            line.range(of: "/" + file + ":").map { String(line[line.index(after: $0.lowerBound)...]) }
        }
    }

    @Test func aCFileIsReadForLinuxOnlySystemNamesAndItsPreprocessorFencesAreHonoured() throws {
        let root = try folder(["Shim/shim.c": """
            // pthread_setname_np(pthread_self(), name) and gettid() in a comment are not code.
            #include <pthread.h>
            #include "curl.h"
            void name_thread(const char *name) {
                pthread_setname_np(pthread_self(), name);
            }
            void fenced(const char *name) {
            #if defined(__linux__)
                pthread_setname_np(pthread_self(), name);
                (void)gettid();
            #elif defined(__APPLE__)
                pthread_setname_np(name);
            #endif
            #ifdef __linux__
                (void)sched_getcpu();
            #endif
            #ifndef __APPLE__
                (void)RUSAGE_THREAD;
            #endif
            }
            long unfenced(void) {
                struct rusage usage;
                getrusage(RUSAGE_THREAD, &usage);
                FILE *file = fopen("/proc/self/stat", "r");
                const char *process = "/processes";
                return gettid() + sched_getcpu() + curl_easy_init() != 0;
            }
            """, "Shim/include/shim.h": """
            #ifndef SHIM_H
            #define SHIM_H
            int current_cpu(void) { return sched_getcpu(); }
            #endif
            """])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 1)
        let everywhere = "(compiled on macOS, iOS, tvOS, watchOS, visionOS)"
        #expect(reports(result.output, in: "Shim/shim.c") == [
            "Shim/shim.c:5: pthread_setname_np(thread, name) \(everywhere)",
            "Shim/shim.c:23: RUSAGE_THREAD \(everywhere)",
            "Shim/shim.c:24: /proc \(everywhere)",
            "Shim/shim.c:26: gettid \(everywhere)",
            "Shim/shim.c:26: sched_getcpu \(everywhere)",
        ])
        #expect(reports(result.output, in: "Shim/include/shim.h") == ["Shim/include/shim.h:3: sched_getcpu \(everywhere)"])
    }

    @Test func uiKitIsNotOnMacOSAndTheCurlModulesAloneAreNoFence() throws {
        let root = try folder(["Code/Fences.swift": """
            #if canImport(UIKit)
            let descriptor = epoll_create1(0)
            #endif
            #if canImport(CConveyCurlShim)
            let transport = CurlTransport()
            #endif
            #if os(Linux) && canImport(CConveyCurlShim)
            let fenced = CurlTransport()
            #endif
            #if os(Linux)
            let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
            #endif
            let status = try? String(contentsOfFile: "/proc/\\(pid)/status", encoding: .utf8)
            """])
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try check(root)
        #expect(result.status == 1)
        #expect(reports(result.output, in: "Code/Fences.swift") == [
            "Code/Fences.swift:2: epoll_create1 (compiled on iOS, tvOS, watchOS, visionOS)",
            "Code/Fences.swift:5: CurlTransport (compiled on macOS, iOS, tvOS, watchOS, visionOS)",
            "Code/Fences.swift:13: /proc (compiled on macOS, iOS, tvOS, watchOS, visionOS)",
        ])
    }

    @Test func thisPackagesSwiftAndCFilesAreFenced() throws {
        let result = try check(nil)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(" C files in Sources, Harness"))
    }
}
