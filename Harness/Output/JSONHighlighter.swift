/// Colours pretty-printed JSON for a terminal: keys, strings, numbers and literals.
enum JSONHighlighter {
    static func highlight(_ json: String, console: Console) -> String {
        var result = ""
        var characters = Array(json)[...]
        while let character = characters.first {
            if character == "\"" {
                let string = takeString(&characters)
                let isKey = characters.first(where: { $0 != " " }) == ":"
                result += console.styled(string, isKey ? .blue : .green)
            } else if character == "-" || character.isNumber {
                let number = characters.prefix { $0 == "-" || $0 == "+" || $0 == "." || $0 == "e" || $0 == "E" || $0.isNumber }
                characters.removeFirst(number.count)
                result += console.styled(String(number), .yellow)
            } else if let literal = ["true", "false", "null"].first(where: { characters.starts(with: $0) }) {
                characters.removeFirst(literal.count)
                result += console.styled(literal, .magenta)
            } else {
                result.append(character)
                characters.removeFirst()
            }
        }
        return result
    }

    /// A whole string literal, escapes included.
    private static func takeString(_ characters: inout ArraySlice<Character>) -> String {
        var string = String(characters.removeFirst())
        var escaped = false
        while let next = characters.first {
            characters.removeFirst()
            string.append(next)
            if escaped { escaped = false } else if next == "\\" { escaped = true } else if next == "\"" { break }
        }
        return string
    }
}
