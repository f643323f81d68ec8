import Foundation
import Testing

/// Every doc sample names its types: a Swift sample in Docs/ that uses one of Convey's types,
/// defined in no sample of its page, has a link to that type's reference page near it, in the
/// text between the samples before and after it (``Type`` or ``Type/member``, which
/// `scripts/docs` checks resolve). SPI types, which the reference leaves out, link to the page
/// that documents them: transports.md (on that page, naming them in backticks is enough), and
/// ConveyTesting's to fixtures.md.
@Suite("Doc samples name their types")
struct DocSampleTypeTests {
    /// The package's root: Tests/ConveyTests/Docs/this file is four levels below it.
    private static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A type of an API listing, and the page that documents it when the reference does not.
    private struct ListedType {
        let name: String
        /// `nil`: the reference has a page for it (``Name``).
        let documentingPage: String?
    }

    private static func listedTypes(_ file: String, documentingPage: String?) throws -> [ListedType] {
        let listing = try String(contentsOf: root.appending(path: "api/\(file)"), encoding: .utf8)
        return listing.split(separator: "\n").compactMap { line in
            let parts = line.components(separatedBy: "  ")
            guard parts.count >= 2, !parts[0].contains("("), !parts[0].hasPrefix("Testing."),
                  parts[1].firstMatch(of: #/^(@\w+(\(.*?\))? )*(final )?(struct|enum|class|protocol|actor|typealias) /#) != nil
            else { return nil }
            return ListedType(name: parts[0], documentingPage: documentingPage)
        }
    }

    /// A fenced block: the line its opening fence is on, the one its closing fence is on, its language, its text.
    private struct Block {
        let open: Int
        let close: Int
        let language: String
        let text: String
    }

    private static func blocks(in lines: [Substring]) -> [Block] {
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            guard let fence = lines[index].firstMatch(of: /^\s*```(\w*)/) else {
                index += 1
                continue
            }
            var close = index + 1
            while close < lines.count, !lines[close].trimmingCharacters(in: .whitespaces).hasPrefix("```") { close += 1 }
            blocks.append(Block(open: index, close: close, language: String(fence.1),
                                text: lines[(index + 1)..<min(close, lines.count)].joined(separator: "\n")))
            index = close + 1
        }
        return blocks
    }

    /// Names the page's Swift samples declare.
    private static func declared(in samples: [Block]) -> Set<String> {
        Set(samples.flatMap { $0.text.matches(of: /\b(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)/).map { String($0.1) } })
    }

    private static func pages() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "Docs").path(percentEncoded: false))
            .filter { $0.hasSuffix(".md") && $0 != "README.md" }.sorted()
    }

    /// What each sample of `page`, whose text is `text`, uses without a link near it: `["page.md:line: Type", …]`.
    private static func unlinked(in text: String, page: String, types: [ListedType]) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let all = blocks(in: lines)
        let samples = all.filter { $0.language == "swift" }
        let declaredOnPage = declared(in: samples)
        var missing: [String] = []
        for sample in samples {
            let position = all.firstIndex { $0.open == sample.open } ?? 0
            let before = position > 0 ? all[position - 1].close + 1 : 0
            let after = position + 1 < all.count ? all[position + 1].open : lines.count
            let near = (lines[before..<sample.open] + lines[min(sample.close + 1, after)..<after]).joined(separator: "\n")
            for type in types where !declaredOnPage.contains(type.name) && uses(sample.text, type.name) {
                let linked = switch type.documentingPage {
                case nil: near.contains("``\(type.name.replacingOccurrences(of: ".", with: "/"))``")
                    || near.contains("``\(type.name.replacingOccurrences(of: ".", with: "/"))/")
                case let documenting? where documenting == page: near.contains("`\(type.name)")
                case let documenting?: near.contains("](\(documenting)")
                }
                if !linked { missing.append("\(page):\(sample.open + 1): \(type.name)") }
            }
        }
        return missing
    }

    /// Whether `code` names `type` (`HTTPError.ClientError` also as written so).
    private static func uses(_ code: String, _ type: String) -> Bool {
        var rest = code[...]
        while let found = rest.range(of: type) {
            let before = found.lowerBound > code.startIndex ? code[code.index(before: found.lowerBound)] : " "
            let after = found.upperBound < code.endIndex ? code[found.upperBound] : " "
            let boundary: (Character) -> Bool = { !($0.isLetter || $0.isNumber || $0 == "_") }
            // `.Name` after a lowercase value is a member, not the type (`HTTPError.ClientError` has its own entry).
            if boundary(before), boundary(after), before != "." { return true }
            rest = code[found.upperBound...]
        }
        return false
    }

    @Test func everyConveyTypeASampleUsesIsLinkedNearIt() throws {
        let types = try Self.listedTypes("Convey.txt", documentingPage: nil)
            + Self.listedTypes("Convey-spi.txt", documentingPage: "transports.md")
            + Self.listedTypes("ConveyTesting.txt", documentingPage: "fixtures.md")
        try #require(types.contains { $0.name == "ConveyServer" } && types.contains { $0.name == "HTTPError.ClientError" })
        var missing: [String] = []
        for page in try Self.pages() {
            let text = try String(contentsOf: Self.root.appending(path: "Docs/\(page)"), encoding: .utf8)
            missing += Self.unlinked(in: text, page: page, types: types)
        }
        #expect(missing.isEmpty, "samples using a type with no link to its reference near them:\n\(missing.joined(separator: "\n"))")
    }

    @Test func aSampleIsHeldToItsNeighbouringText() {
        let types = [ListedType(name: "TaskEchoStyle", documentingPage: nil), ListedType(name: "StubTransport", documentingPage: "transports.md")]
        let sample = "```swift\nstruct Loud: ServerTask {\n    var echoStyle: TaskEchoStyle { .consoleFull }\n}\n```"
        #expect(Self.unlinked(in: "A task.\n\(sample)\nMore.", page: "p.md", types: types) == ["p.md:2: TaskEchoStyle"])
        #expect(Self.unlinked(in: "A task.\n\(sample)\nIts style is a ``TaskEchoStyle``.", page: "p.md", types: types).isEmpty)
        // A link next to another sample does not count for this one.
        let far = "``TaskEchoStyle``\n```swift\nlet a = 1\n```\nText.\n\(sample)\n"
        #expect(Self.unlinked(in: far, page: "p.md", types: types) == ["p.md:6: TaskEchoStyle"])
        // A type declared by a sample of the page is the page's own.
        let declaring = "```swift\nstruct TaskEchoStyle {}\n```\n\(sample)"
        #expect(Self.unlinked(in: declaring, page: "p.md", types: types).isEmpty)
        // SPI types link to the page that documents them.
        let stub = "```swift\nserver.transport = StubTransport { _ in fatalError() }\n```"
        #expect(Self.unlinked(in: stub, page: "p.md", types: types) == ["p.md:1: StubTransport"])
        #expect(Self.unlinked(in: "See [transports](transports.md).\n" + stub, page: "p.md", types: types).isEmpty)
        #expect(!Self.uses("let style = server.TaskEchoStyleX", "TaskEchoStyle"))
        #expect(!Self.uses("HTTPError.ClientError.notFound", "ClientError"), "a nested type is its own entry")
    }
}
