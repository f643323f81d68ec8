import Foundation
import Testing

/// Waits until `condition` holds, checking between yields; fails the test after `limit` of wall
/// time, a guard against hanging, never a measure of speed.
func waitUntil(isolation: isolated (any Actor)? = #isolation, _ what: String, limit: Duration = .seconds(60),
               _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("gave up waiting until \(what)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

extension Array {
    /// The element at `index`, or a recorded issue and a thrown error when there is none: a test
    /// that reads past the end of what it got fails there, instead of crashing the test process
    /// and hiding the tests after it.
    func required(_ index: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> Element {
        try #require(indices.contains(index) ? self[index] : nil, "no element \(index) among \(count)", sourceLocation: sourceLocation)
    }
}
