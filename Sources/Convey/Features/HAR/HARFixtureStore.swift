import Foundation

/// The entries of one `HARFixtures`, which of them have answered, and the matching rules:
/// shared by every transport made from it, from any task.
///
/// A request is answered by the first entry, in file order, that has not answered yet among those
/// with its method and URL (query in any order) and, where those entries hold different bodies,
/// its body (`HARBodyMatch`). Each entry answers once: a request whose entries have all answered
/// is unanswered, as one without entries is (record mode then sends it to the network).
final class HARFixtureStore: Sendable {
    /// What the store says about a request.
    enum Selection: Sendable {
        case answer(HARFixture)
        /// No entry answers the request; the reason says what came closest.
        case unmatched(String)
    }

    /// The entries a request's method, URL and query select, worked out once per distinct request.
    private struct Candidates: Sendable {
        /// Fixture indices, in file order.
        var positions: [Int]
        /// Whether their bodies differ, so that the request's body must choose.
        var bodiesDiffer: Bool
        /// How many of `positions`, from the start, have answered: where the next search begins.
        var answeredPrefix = 0
    }

    private let entries = InlineLocked(Entries())

    /// The entries, which have answered, and what matching worked out.
    private struct Entries: Sendable {
        var fixtures: [HARFixture] = []
        /// Each fixture's key and body apart, so that matching reads them without copying fixtures.
        var keys: [HARRequestKey] = []
        var bodies: [Data?] = []
        var answered: [Bool] = []
        /// Fixture indices by `HARRequestKey.target`, in file order.
        var index: [String: [Int]] = [:]
        var candidatesByRequest: [HARRequestKey: Candidates] = [:]

        /// The entries for `key`, from the cache or worked out now.
        func candidates(for key: HARRequestKey) -> Candidates {
            if let cached = candidatesByRequest[key] { return cached }
            let positions = (index[key.target] ?? []).filter { keys[$0].queryAnswers(key.query) }
            let firstBody = positions.first.flatMap { bodies[$0] } ?? Data()
            let differ = positions.contains { (bodies[$0] ?? Data()) != firstBody }
            return Candidates(positions: positions, bodiesDiffer: differ)
        }
    }

    init(_ fixtures: [HARFixture]) {
        for fixture in fixtures { add(fixture, answered: false) }
    }

    /// Adds an entry after the others: what record mode appended.
    func add(_ fixture: HARFixture, answered isAnswered: Bool) {
        entries.withLock { entries in
            entries.index[fixture.key.target, default: []].append(entries.fixtures.count)
            entries.fixtures.append(fixture)
            entries.keys.append(fixture.key)
            entries.bodies.append(fixture.body)
            entries.answered.append(isAnswered)
            // Requests to the entry's method and URL work out their entries again.
            entries.candidatesByRequest = entries.candidatesByRequest.filter { $0.key.target != fixture.key.target }
        }
    }

    /// The entry that answers the request `key` stands for, marked as answered; `body` reads the
    /// request's body when entries must be told apart by it (outside the store's lock: it may read a file).
    func select(_ key: HARRequestKey, body: () -> Data?, contentType: String?) -> Selection {
        let found: (Candidates, [(Int, Data?)])? = entries.withLock { entries in
            let candidates = entries.candidates(for: key)
            guard !candidates.positions.isEmpty else { return nil }
            return (candidates, candidates.bodiesDiffer ? candidates.positions.map { ($0, entries.bodies[$0]) } : [])
        }
        guard let (candidates, bodies) = found else { return .unmatched(closest(to: key)) }
        var chosen: [Int]?
        if candidates.bodiesDiffer {
            let requestBody = body()
            let matching = bodies.filter { HARBodyMatch.answers(fixture: $0.1, request: requestBody, contentType: contentType) }.map(\.0)
            guard !matching.isEmpty else {
                return .unmatched("\(candidates.positions.count) entries have its method and URL, none its body (\(requestBody?.count ?? 0) bytes)")
            }
            chosen = matching
        }
        return entries.withLock { entries in
            var current = entries.candidatesByRequest[key] ?? candidates
            let positions = chosen ?? Array(current.positions[current.answeredPrefix...])
            guard let first = positions.first(where: { !entries.answered[$0] }) else {
                let count = chosen?.count ?? current.positions.count
                return .unmatched(count == 1 ? "its entry has answered already" : "all \(count) of its entries have answered already")
            }
            entries.answered[first] = true
            while current.answeredPrefix < current.positions.count, entries.answered[current.positions[current.answeredPrefix]] {
                current.answeredPrefix += 1
            }
            // Only requests with several entries need to remember where their search stopped.
            if current.positions.count > 1 { entries.candidatesByRequest[key] = current }
            return .answer(entries.fixtures[first])
        }
    }

    /// `METHOD URL` of each entry that has not answered yet, in file order.
    var unansweredEntries: [String] {
        entries.withLock { entries in entries.fixtures.indices.filter { !entries.answered[$0] }.map { entries.fixtures[$0].name } }
    }

    var count: Int { entries.withLock { $0.fixtures.count } }

    /// What came closest to `key`: entries with its method and URL but another query, or entries
    /// of the same origin and path with another method.
    private func closest(to key: HARRequestKey) -> String {
        entries.withLock { entries in
            let sameTarget = (entries.index[key.target] ?? []).prefix(3).map { entries.fixtures[$0].name }
            if !sameTarget.isEmpty {
                return "no entry with its query; entries with its method and path: " + sameTarget.joined(separator: ", ")
            }
            let path = key.target.drop { $0 != " " }
            let otherMethods = entries.index.keys.filter { $0.hasSuffix(path) }.sorted().prefix(3)
            if !otherMethods.isEmpty {
                return "no entry with its method and path; the path appears as " + otherMethods.map { String($0.prefix { $0 != " " }) }.joined(separator: ", ")
            }
            return "no entry for its method and path among \(entries.fixtures.count) entr\(entries.fixtures.count == 1 ? "y" : "ies")"
        }
    }
}
