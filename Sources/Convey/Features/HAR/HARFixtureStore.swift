import Foundation

/// The entries of one `HARFixtures`, which of them have answered, and the matching rules:
/// shared by every transport made from it, from any task.
///
/// A request is answered by the first entry, in file order, that has not answered yet among those
/// with its method and URL (query in any order) and, where those entries hold different bodies,
/// its body (`HARBodyMatch`). Once all of them have answered, the last one answers again, except
/// in record mode, where the request goes to the network and its exchange becomes a new entry.
final class HARFixtureStore: @unchecked Sendable {
    /// What the store says about a request.
    enum Selection: Sendable {
        case answer(HARFixture)
        /// Record mode: every entry for the request has answered.
        case exhausted
        /// No entry answers the request; the reason says what came closest.
        case unmatched(String)
    }

    private let lock = NSLock()
    private var fixtures: [HARFixture] = []
    private var answered: [Bool] = []
    /// Fixture indices by `HARRequestKey.target`, in file order.
    private var index: [String: [Int]] = [:]

    init(_ fixtures: [HARFixture]) {
        for fixture in fixtures { add(fixture, answered: false) }
    }

    /// Adds an entry after the others: what record mode appended.
    func add(_ fixture: HARFixture, answered isAnswered: Bool) {
        lock.withLock {
            index[fixture.key.target, default: []].append(fixtures.count)
            fixtures.append(fixture)
            answered.append(isAnswered)
        }
    }

    /// The entry that answers `request`, whose body `body` reads when entries must be told apart
    /// by it (outside the store's lock: it may read a file).
    func select(_ key: HARRequestKey, body: () -> Data?, contentType: String?, repeatsLast: Bool) -> Selection {
        let candidates = lock.withLock { (index[key.target] ?? []).filter { fixtures[$0].key.queryAnswers(key.query) }.map { ($0, fixtures[$0].body) } }
        guard !candidates.isEmpty else { return .unmatched(closest(to: key)) }
        var chosen = candidates.map(\.0)
        let bodies = Set(candidates.map { $0.1 ?? Data() })
        if bodies.count > 1 {
            let requestBody = body()
            chosen = candidates.filter { HARBodyMatch.answers(fixture: $0.1, request: requestBody, contentType: contentType) }.map(\.0)
            guard !chosen.isEmpty else {
                return .unmatched("\(candidates.count) entries have its method and URL, none its body (\(requestBody?.count ?? 0) bytes)")
            }
        }
        return lock.withLock {
            if let first = chosen.first(where: { !answered[$0] }) {
                answered[first] = true
                return .answer(fixtures[first])
            }
            guard repeatsLast, let last = chosen.last else { return .exhausted }
            return .answer(fixtures[last])
        }
    }

    /// `METHOD URL` of each entry that has not answered yet, in file order.
    var unansweredEntries: [String] {
        lock.withLock { fixtures.indices.filter { !answered[$0] }.map { fixtures[$0].name } }
    }

    var count: Int { lock.withLock { fixtures.count } }

    /// What came closest to `key`: entries with its method and URL but another query, or entries
    /// of the same origin and path with another method.
    private func closest(to key: HARRequestKey) -> String {
        lock.withLock {
            let sameTarget = (index[key.target] ?? []).prefix(3).map { fixtures[$0].name }
            if !sameTarget.isEmpty {
                return "no entry with its query; entries with its method and path: " + sameTarget.joined(separator: ", ")
            }
            let path = key.target.drop { $0 != " " }
            let otherMethods = index.keys.filter { $0.hasSuffix(path) }.sorted().prefix(3)
            if !otherMethods.isEmpty {
                return "no entry with its method and path; the path appears as " + otherMethods.map { String($0.prefix { $0 != " " }) }.joined(separator: ", ")
            }
            return "no entry for its method and path among \(fixtures.count) entr\(fixtures.count == 1 ? "y" : "ies")"
        }
    }
}
