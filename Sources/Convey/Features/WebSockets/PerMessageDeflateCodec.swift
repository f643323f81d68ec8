internal import CZlib

/// zlib's constants the permessage-deflate codec uses, from zlib.h.
private enum Zlib {
    static var ok: Int32 { 0 }
    static var streamEnd: Int32 { 1 }
    static var bufferError: Int32 { -5 }
    static var noFlush: Int32 { 0 }
    static var syncFlush: Int32 { 2 }
    static var deflated: Int32 { 8 }
    static var defaultLevel: Int32 { -1 }
    static var defaultStrategy: Int32 { 0 }
    static var memoryLevel: Int32 { 8 }
    /// The zlib version the declarations in CZlib follow; zlib checks its major version and the stream size.
    static var headerVersion: String { "1.2.11" }
    /// The empty stored block a sync flush ends with, which RFC 7692 §7.2.1 has the sender strip
    /// and the receiver put back.
    static let syncFlushTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    static func message(_ stream: UnsafeMutablePointer<convey_z_stream>, status: Int32) -> String {
        stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
    }
}

/// Why zlib could not start or go on: `reason` is zlib's.
struct PerMessageDeflateFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// zlib's message or status.
    var reason: String

    var description: String { "permessage-deflate: \(reason)" }
}

/// Compresses the client's messages for permessage-deflate (RFC 7692 §7.2.1): raw deflate, each
/// message ended by a sync flush whose trailing `00 00 ff ff` is stripped, the window kept from
/// one message to the next unless the client negotiated no context takeover.
final class PerMessageDeflateCompressor {
    private let stream: UnsafeMutablePointer<convey_z_stream>
    private let scratch: UnsafeMutableBufferPointer<UInt8>
    private let resetsAfterEachMessage: Bool

    /// A compressor with a window of 2^`windowBits` bytes (9–15: zlib cannot make an 8-bit
    /// window, so a client limited to 8 sends its messages uncompressed, which RFC 7692 allows).
    init(windowBits: Int, noContextTakeover: Bool) throws(PerMessageDeflateFailure) {
        let stream = UnsafeMutablePointer<convey_z_stream>.allocate(capacity: 1)
        stream.initialize(to: convey_z_stream())
        // Negative window bits: raw deflate, without zlib's header and trailer.
        let status = deflateInit2_(stream, Zlib.defaultLevel, Zlib.deflated, -Int32(windowBits), Zlib.memoryLevel,
                                   Zlib.defaultStrategy, Zlib.headerVersion, Int32(MemoryLayout<convey_z_stream>.size))
        guard status == Zlib.ok else {
            stream.deallocate()
            throw PerMessageDeflateFailure(reason: "deflate could not start (zlib status \(status))")
        }
        self.stream = stream
        scratch = .allocate(capacity: 16 * 1024)
        resetsAfterEachMessage = noContextTakeover
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        scratch.deallocate()
    }

    /// `message` compressed, ready to be a compressed message's payload.
    func compress(_ message: UnsafeRawBufferPointer) throws(PerMessageDeflateFailure) -> [UInt8] {
        var output: [UInt8] = []
        // deflateBound's order of size, so that the output grows at most once or twice.
        output.reserveCapacity(min(message.count + message.count / 1000 + 64, 1 << 20))
        var offset = 0
        repeat {
            // zlib counts input in 32-bit lengths: feed large messages in slices.
            let length = min(message.count - offset, 1 << 30)
            stream.pointee.next_in = message.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
            stream.pointee.avail_in = UInt32(length)
            offset += length
            try drain(flush: offset == message.count ? Zlib.syncFlush : Zlib.noFlush, into: &output)
        } while offset < message.count
        if output.count >= 4, output[(output.count - 4)...].elementsEqual(Zlib.syncFlushTail) { output.removeLast(4) }
        // zlib writes nothing for a flush with no input right after another flush, but an empty
        // payload would not inflate: `00` is the empty stored block's header, whose `00 00 ff ff`
        // the receiver puts back (RFC 7692 §7.2.3.6). The stream is byte-aligned after a flush.
        if output.isEmpty { output = [0x00] }
        if resetsAfterEachMessage { deflateReset(stream) }
        return output
    }

    /// Runs deflate until it has taken all the input and, when flushing, written all it holds.
    private func drain(flush: Int32, into output: inout [UInt8]) throws(PerMessageDeflateFailure) {
        while true {
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = UInt32(scratch.count)
            let status = deflate(stream, flush)
            guard status == Zlib.ok || status == Zlib.bufferError else {
                throw PerMessageDeflateFailure(reason: "deflate failed: " + Zlib.message(stream, status: status))
            }
            let produced = scratch.count - Int(stream.pointee.avail_out)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<produced]))
            // Room left over means deflate has nothing more to give for this input and flush.
            if stream.pointee.avail_out != 0, stream.pointee.avail_in == 0 { return }
        }
    }
}

/// Inflates the server's compressed messages for permessage-deflate (RFC 7692 §7.2.2): each
/// message's payload with `00 00 ff ff` put back after it, the window kept from one message to
/// the next unless the server negotiated no context takeover.
///
/// The caller says how many bytes a message may still grow by; the inflater never produces more
/// than one byte past that, so a small message that would inflate to gigabytes costs at most the
/// limit and one slice of scratch space.
final class PerMessageDeflateDecompressor {
    /// The most a single inflate call writes before the caller sees it.
    static let sliceSize = 16 * 1024

    private let stream: UnsafeMutablePointer<convey_z_stream>
    private let scratch: UnsafeMutableBufferPointer<UInt8>
    /// `00 00 ff ff`, where zlib can read it without a closure around each use.
    private let syncFlushTail: UnsafeMutableBufferPointer<UInt8>
    private let resetsAfterEachMessage: Bool
    /// The sender ended its deflate stream (a block with BFINAL set) inside the current message.
    private var streamEnded = false

    /// An inflater for a server window of 2^`windowBits` bytes (8–15).
    init(windowBits: Int, noContextTakeover: Bool) throws(PerMessageDeflateFailure) {
        let stream = UnsafeMutablePointer<convey_z_stream>.allocate(capacity: 1)
        stream.initialize(to: convey_z_stream())
        // zlib's own deflate cannot make an 8-bit window and silently uses 9: a server built on
        // it that negotiated 8 sends distances a 256-byte window cannot follow. A window of 9
        // inflates both what it says and what it does.
        let bits = max(windowBits, 9)
        let status = inflateInit2_(stream, -Int32(bits), Zlib.headerVersion, Int32(MemoryLayout<convey_z_stream>.size))
        guard status == Zlib.ok else {
            stream.deallocate()
            throw PerMessageDeflateFailure(reason: "inflate could not start (zlib status \(status))")
        }
        self.stream = stream
        scratch = .allocate(capacity: Self.sliceSize)
        syncFlushTail = .allocate(capacity: Zlib.syncFlushTail.count)
        _ = syncFlushTail.initialize(from: Zlib.syncFlushTail)
        resetsAfterEachMessage = noContextTakeover
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        scratch.deallocate()
        syncFlushTail.deallocate()
    }

    /// Inflates the next payload bytes of a compressed message, handing the output to `receive`
    /// in slices. Produces at most `allowance + 1` bytes in all; returns how many it produced, so
    /// that a result above `allowance` says the message outgrew its limit (the caller then stops).
    func inflate(_ compressed: UnsafeRawBufferPointer, allowance: Int,
                 _ receive: (UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> Void) throws(WebSocketProtocolError) -> Int {
        // After a block with BFINAL set the stream is over; RFC 7692 §7.2.3.4 has the sender
        // follow it with a byte that makes `00 00 ff ff` parse, which is read no further.
        guard !compressed.isEmpty, !streamEnded else { return 0 }
        var produced = 0
        var offset = 0
        while true {
            let inputLength = min(compressed.count - offset, 1 << 30)
            stream.pointee.next_in = compressed.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
            stream.pointee.avail_in = UInt32(inputLength)
            let room = min(scratch.count, allowance + 1 - produced)
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = UInt32(room)
            let status = CZlib.inflate(stream, Zlib.noFlush)
            offset += inputLength - Int(stream.pointee.avail_in)
            let written = room - Int(stream.pointee.avail_out)
            switch status {
            case Zlib.ok, Zlib.bufferError: break
            case Zlib.streamEnd: streamEnded = true
            default: throw .invalidCompressedData(reason: Zlib.message(stream, status: status))
            }
            if written > 0 {
                produced += written
                try receive(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: scratch[..<written])))
                if produced > allowance { return produced }
            }
            if streamEnded { return produced }
            // Room left over and no input left: inflate has given all it can for now.
            if offset == compressed.count, stream.pointee.avail_out != 0 { return produced }
            if written == 0, status == Zlib.bufferError { return produced }
        }
    }

    /// Ends the current message: inflates the `00 00 ff ff` the sender stripped (unless its
    /// stream already ended), then resets for the next message when the server keeps no context.
    func finishMessage(allowance: Int,
                       _ receive: (UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> Void) throws(WebSocketProtocolError) -> Int {
        var produced = 0
        if !streamEnded {
            produced = try inflate(UnsafeRawBufferPointer(syncFlushTail), allowance: allowance, receive)
        }
        // A stream that ended cannot go on: the sender's next message starts a new one.
        if resetsAfterEachMessage || streamEnded {
            inflateReset(stream)
            streamEnded = false
        }
        return produced
    }

    /// Drops what a failed message left in the inflater, so that nothing of it reaches another.
    func reset() {
        inflateReset(stream)
        streamEnded = false
    }
}
