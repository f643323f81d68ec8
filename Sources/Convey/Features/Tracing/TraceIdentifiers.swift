import Foundation

/// A W3C trace id: 16 bytes, never all zero, as two 64-bit halves (high bytes first).
struct TraceID: Sendable, Hashable {
    let high: UInt64
    let low: UInt64

    /// Whether the id may be sent: W3C Trace Context forbids the all-zero id.
    var isValid: Bool { high != 0 || low != 0 }

    /// 32 lowercase hex digits, as `traceparent` and OTLP's JSON encoding write it.
    var hex: String { TraceHex.string(high) + TraceHex.string(low) }
}

/// Makes trace and span ids: random, never zero, without a system call per id. A generator
/// seeded once from the system's random source and advanced under a lock: ids need to be unique
/// and unguessable in practice (W3C Trace Context §6), not secret, so a fast generator does.
enum TraceIdentifiers {
    private static let state = Locked(SplitMix64(seed: UInt64.random(in: 1...UInt64.max)))

    /// A new span id.
    static func spanID() -> UInt64 {
        state.withLock { generator in
            var value = generator.next()
            while value == 0 { value = generator.next() }
            return value
        }
    }

    /// A new trace id.
    static func traceID() -> TraceID {
        state.withLock { generator in
            var id = TraceID(high: generator.next(), low: generator.next())
            while !id.isValid { id = TraceID(high: generator.next(), low: generator.next()) }
            return id
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood): one addition and three mixing steps per value, every
/// 64-bit value once per period.
private struct SplitMix64: Sendable {
    var seed: UInt64

    mutating func next() -> UInt64 {
        seed &+= 0x9E37_79B9_7F4A_7C15
        var value = seed
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// Lowercase hex, as W3C Trace Context and OTLP write ids.
enum TraceHex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `value` as 16 lowercase hex digits.
    static func string(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            write(value, into: buffer, at: 0)
            return 16
        }
    }

    /// Writes `value` as 16 lowercase hex digits into `buffer` from `offset`.
    static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for index in 0..<16 {
            buffer[offset + index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
        }
    }

    /// The value of exactly 16 lowercase hex digits, or `nil` when `text` is anything else
    /// (uppercase included: W3C Trace Context level 1 allows lowercase only).
    static func value(_ text: ArraySlice<UInt8>) -> UInt64? {
        guard text.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in text {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}
