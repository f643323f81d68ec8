internal import CZlib
import Foundation

/// Decodes a gzip or deflate response body as it arrives, through the system zlib, in slices of
/// at most 64 KiB, and notices a body that is corrupt or cut short.
///
/// A decompression bomb never sits in memory: each slice goes to the sink, which enforces the
/// size limit on decoded bytes. gzip's trailer (CRC-32 and length) is checked, so a truncated or
/// altered body fails instead of passing as a short success.
final class ContentDecoder {
    /// The codings Convey decodes itself; anything else passes through undecoded.
    enum Coding: String, Sendable {
        case gzip
        case deflate

        /// The coding of a `Content-Encoding` value, or `nil` when the body passes through as it
        /// came: no coding, `identity`, an unknown coding or a list of several.
        init?(contentEncoding: String?) {
            guard let value = contentEncoding?.trimmingASCIIWhitespace().lowercased(), !value.contains(",") else { return nil }
            switch value {
            case "gzip", "x-gzip": self = .gzip
            case "deflate": self = .deflate
            default: return nil
            }
        }
    }

    /// How far one call to `decode` got.
    struct Progress {
        /// Input bytes consumed; fewer than offered when the receiver refused a slice.
        var consumed: Int
        /// Whether the receiver refused a slice, which is kept and offered first next time.
        var paused: Bool
    }

    let coding: Coding
    private let stream: UnsafeMutablePointer<convey_z_stream>
    private let output: UnsafeMutableBufferPointer<UInt8>
    private var started = false
    private var ended = false
    /// A decoded slice the receiver refused.
    private var pending: [UInt8] = []

    private static var ok: Int32 { 0 }
    private static var streamEnd: Int32 { 1 }
    private static var bufferError: Int32 { -5 }
    private static var noFlush: Int32 { 0 }
    private static var sliceSize: Int { 64 * 1024 }
    private static var headerVersion: String { "1.2.11" }

    init(coding: Coding) {
        self.coding = coding
        stream = .allocate(capacity: 1)
        stream.initialize(to: convey_z_stream())
        output = .allocate(capacity: Self.sliceSize)
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deallocate()
        output.deallocate()
    }

    /// Decodes `input`, handing each decoded slice to `receive`, which returns whether it took it.
    /// Throws `URLError(.cannotDecodeContentData)` when the body is not valid for its coding.
    func decode(_ input: UnsafeRawBufferPointer, into receive: (UnsafeRawBufferPointer) throws -> Bool) throws -> Progress {
        if !pending.isEmpty {
            guard try pending.withUnsafeBytes(receive) else { return Progress(consumed: 0, paused: true) }
            pending.removeAll(keepingCapacity: true)
        }
        guard let base = input.baseAddress, !input.isEmpty else { return Progress(consumed: 0, paused: false) }
        if !started { try start(firstBytes: input) }
        var consumed = 0
        while true {
            if ended {
                if consumed == input.count { break }
                guard coding == .gzip, Self.startsGzipMember(input, at: consumed) else {
                    throw Self.failure("\(input.count - consumed) bytes follow the end of the \(coding.rawValue) data")
                }
                inflateReset(stream)
                ended = false
            }
            stream.pointee.next_in = base.advanced(by: consumed).assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_in = Self.inputLength(input.count - consumed)
            let offered = Int(stream.pointee.avail_in)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = UInt32(output.count)
            let status = inflate(stream, Self.noFlush)
            consumed += offered - Int(stream.pointee.avail_in)
            let produced = output.count - Int(stream.pointee.avail_out)
            switch status {
            case Self.ok: break
            case Self.streamEnd: ended = true
            case Self.bufferError: if produced == 0 { return Progress(consumed: consumed, paused: false) }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw Self.failure("the \(coding.rawValue) data is corrupt (\(message))")
            }
            if produced > 0 {
                let slice = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(output)[..<produced])
                if try !receive(slice) {
                    pending = Array(slice)
                    return Progress(consumed: consumed, paused: true)
                }
            }
            if produced < output.count, consumed == input.count { break }
        }
        return Progress(consumed: consumed, paused: false)
    }

    /// Confirms the body ended where its coding says it ends. Throws when it was cut short.
    func finish() throws {
        guard started else { return }
        guard ended, pending.isEmpty else {
            throw Self.failure("the \(coding.rawValue) data ends early: the body was cut short")
        }
    }

    private func start(firstBytes: UnsafeRawBufferPointer) throws {
        // 15 + 16: gzip's header and trailer. For deflate, servers send either the zlib format
        // RFC 9110 names or raw deflate; tell them apart by the zlib header's check bits.
        let windowBits: Int32 = switch coding {
        case .gzip: 15 + 16
        case .deflate: Self.hasZlibHeader(firstBytes) ? 15 : -15
        }
        let status = inflateInit2_(stream, windowBits, Self.headerVersion, Int32(MemoryLayout<convey_z_stream>.size))
        guard status == Self.ok else { throw Self.failure("zlib could not start (status \(status))") }
        started = true
    }

    /// How many of `remaining` bytes zlib takes in one call: all of them, at most `UInt32.max`
    /// (zlib counts in 32 bits). Clamped, since `Int(UInt32.max)` traps where `Int` has 32 bits.
    static func inputLength<Count: BinaryInteger>(_ remaining: Count) -> UInt32 {
        UInt32(clamping: remaining)
    }

    private static func hasZlibHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 2 else { return bytes.first.map { $0 & 0x0F == 8 } ?? true }
        return bytes[0] & 0x0F == 8 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
    }

    private static func startsGzipMember(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        bytes.count - offset >= 2 && bytes[offset] == 0x1F && bytes[offset + 1] == 0x8B
    }

    private static func failure(_ reason: String) -> URLError {
        URLError(.cannotDecodeContentData, userInfo: [NSLocalizedDescriptionKey: reason])
    }
}
