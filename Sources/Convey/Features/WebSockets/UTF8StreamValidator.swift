/// Checks that bytes arriving in pieces are UTF-8 (RFC 3629), failing at the first byte that
/// cannot belong to a valid sequence, without waiting for the rest: a character may be split
/// between pieces, a bad byte is found as soon as it arrives.
///
/// The ranges are Unicode's table of well-formed sequences (Unicode 15, table 3-7): they refuse
/// overlong forms, surrogates (U+D800–U+DFFF) and anything past U+10FFFF at their second byte.
struct UTF8StreamValidator: Sendable, Hashable {
    /// Continuation bytes still expected in the current character.
    private var pending = 0
    /// The range the next continuation byte must fall in (it narrows only after a lead byte).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the bytes so far end between characters, so that the text may end here.
    var isAtCharacterBoundary: Bool { pending == 0 }

    /// Checks the next piece: the offset of the first invalid byte in it, or `nil` when all of it
    /// is valid so far.
    mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            if pending == 0 {
                // ASCII runs, eight bytes at a time: most text is mostly ASCII.
                while index + 8 <= count, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                guard index < count else { return nil }
                let byte = bytes[index]
                switch byte {
                case 0x00...0x7F: break
                case 0xC2...0xDF: start(1, lower: 0x80, upper: 0xBF)
                case 0xE0: start(2, lower: 0xA0, upper: 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: start(2, lower: 0x80, upper: 0xBF)
                case 0xED: start(2, lower: 0x80, upper: 0x9F)
                case 0xF0: start(3, lower: 0x90, upper: 0xBF)
                case 0xF1...0xF3: start(3, lower: 0x80, upper: 0xBF)
                case 0xF4: start(3, lower: 0x80, upper: 0x8F)
                default: return index
                }
            } else {
                let byte = bytes[index]
                guard byte >= lower, byte <= upper else { return index }
                pending -= 1
                lower = 0x80
                upper = 0xBF
            }
            index += 1
        }
        return nil
    }

    private mutating func start(_ continuationBytes: Int, lower: UInt8, upper: UInt8) {
        pending = continuationBytes
        self.lower = lower
        self.upper = upper
    }
}
