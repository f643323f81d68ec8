#if os(Linux) || os(macOS)
import Foundation
import Testing

/// Echo's default sink shares one ordered stream with the app's `print`: into a pipe, where
/// `print` buffers, the lines arrive in the order they happened.
@Suite("Echo on standard output")
struct StandardOutputEchoTests {
    @Test func echoAndTheAppsPrintArriveInOrderThroughAPipe() async throws {
        // The child prints, runs a task with echo on, prints, runs another, prints again.
        let lines = try await FreshProcess.output("echo-order").split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(lines)")
        #expect(lines[0] == "app: before")
        #expect(lines[1].hasPrefix("[Convey] GET http://probe.invalid/items/1 → 200 OK"), "\(lines[1])")
        #expect(lines[2] == "app: between")
        #expect(lines[3].hasPrefix("[Convey] GET http://probe.invalid/items/2 → 200 OK"), "\(lines[3])")
        #expect(lines[4] == "app: after")
    }
}
#endif
