/// SHA-1 (FIPS 180-4), written out because CryptoKit does not exist on Linux.
///
/// Only for the WebSocket opening handshake, where RFC 6455 §4.2.2 fixes it: the server proves it
/// read the client's key by answering with the SHA-1 of the key and a fixed GUID. SHA-1 is
/// broken for collisions; nothing here relies on it for security.
enum SHA1 {
    /// The 20-byte digest of `bytes`.
    static func digest(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var message = Array(bytes)
        let bitLength = UInt64(message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var schedule = [UInt32](repeating: 0, count: 80)
        message.withUnsafeBufferPointer { buffer in
            for blockStart in stride(from: 0, to: buffer.count, by: 64) {
                compress(buffer, at: blockStart, state: &state, schedule: &schedule)
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(20)
        for word in state {
            result += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return result
    }

    private static func compress(_ block: UnsafeBufferPointer<UInt8>, at start: Int, state: inout [UInt32], schedule w: inout [UInt32]) {
        for index in 0..<16 {
            let offset = start + index * 4
            w[index] = UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8 | UInt32(block[offset + 3])
        }
        for index in 16..<80 {
            w[index] = (w[index - 3] ^ w[index - 8] ^ w[index - 14] ^ w[index - 16]).rotatedRight(31)
        }
        var (a, b, c, d, e) = (state[0], state[1], state[2], state[3], state[4])
        for index in 0..<80 {
            let (mixed, constant): (UInt32, UInt32) = switch index {
            case 0..<20: ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (b ^ c ^ d, 0xCA62_C1D6)
            }
            let temp = a.rotatedRight(27) &+ mixed &+ e &+ constant &+ w[index]
            (e, d, c, b, a) = (d, c, b.rotatedRight(2), a, temp)
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d; state[4] &+= e
    }
}
