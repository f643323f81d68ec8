internal import CZlib
import Foundation

/// gzip (RFC 1952) in front of another sink, through the system zlib: compresses what is written
/// and passes the compressed bytes on, in chunks of at most 64 KiB.
final class GzipSink<Destination: BodySink>: BodySink {
    /// Where the compressed bytes go; holds them all once `finish()` has returned.
    private(set) var destination: Destination
    private let stream: UnsafeMutablePointer<convey_z_stream>
    private let output: UnsafeMutableBufferPointer<UInt8>

    /// zlib's constants, from zlib.h.
    private static var ok: Int32 { 0 }
    private static var streamEnd: Int32 { 1 }
    private static var bufferError: Int32 { -5 }
    private static var noFlush: Int32 { 0 }
    private static var finishFlush: Int32 { 4 }
    private static var deflated: Int32 { 8 }
    private static var defaultLevel: Int32 { -1 }
    private static var defaultStrategy: Int32 { 0 }
    /// A 32 KiB window (15) plus 16, which asks zlib for a gzip header and trailer instead of zlib's own.
    private static var gzipWindowBits: Int32 { 15 + 16 }
    /// The zlib version the declarations in CZlib follow; zlib checks its major version and the stream size.
    private static var headerVersion: String { "1.2.11" }

    init(into destination: Destination) throws {
        let stream = UnsafeMutablePointer<convey_z_stream>.allocate(capacity: 1)
        stream.initialize(to: convey_z_stream())
        let status = deflateInit2_(stream, Self.defaultLevel, Self.deflated, Self.gzipWindowBits, 8, Self.defaultStrategy,
                                   Self.headerVersion, Int32(MemoryLayout<convey_z_stream>.size))
        guard status == Self.ok else {
            stream.deallocate()
            throw Self.failure(status, message: nil)
        }
        self.stream = stream
        self.destination = destination
        output = .allocate(capacity: 64 * 1024)
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    func write(_ bytes: Data) throws {
        try compress(bytes, flush: Self.noFlush)
    }

    func finish() throws {
        try compress(Data(), flush: Self.finishFlush)
        try destination.finish()
    }

    private func compress(_ bytes: Data, flush: Int32) throws {
        try bytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            // zlib counts input in 32-bit lengths: feed large buffers in slices.
            var offset = 0
            repeat {
                let length = min(input.count - offset, 1 << 30)
                stream.pointee.next_in = input.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: UInt8.self) }
                stream.pointee.avail_in = UInt32(length)
                offset += length
                let finishing = flush == Self.finishFlush && offset == input.count
                try drain(flush: finishing ? Self.finishFlush : Self.noFlush)
            } while offset < input.count
        }
    }

    /// Runs `deflate` until it has consumed the input (or, when finishing, written the trailer).
    private func drain(flush: Int32) throws {
        while true {
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = UInt32(output.count)
            let status = deflate(stream, flush)
            guard status == Self.ok || status == Self.streamEnd || status == Self.bufferError else {
                throw Self.failure(status, message: stream.pointee.msg.map { String(cString: $0) })
            }
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { try destination.write(Data(UnsafeBufferPointer(rebasing: output[..<produced]))) }
            if flush == Self.finishFlush ? status == Self.streamEnd : stream.pointee.avail_out != 0 { return }
        }
    }

    private static func failure(_ status: Int32, message: String?) -> ConveyError {
        .upload("the gzip-compressed request body", "zlib failed with status \(status)" + (message.map { ": \($0)" } ?? ""))
    }
}

extension GzipSink where Destination == MemorySink {
    /// `data`, gzipped, as a request body with `Content-Encoding: gzip`. Runs off the actor.
    @concurrent
    static func requestBody(compressing data: Data, contentType: String) async throws -> RequestBody {
        let gzip = try GzipSink(into: MemorySink())
        try gzip.write(data)
        try gzip.finish()
        return RequestBody(data: gzip.destination.data, contentType: contentType, contentEncoding: UploadCompression.gzipEncoding)
    }
}

/// Whether request bodies are gzipped before they are sent (`Content-Encoding: gzip`): what
/// `ServerConfiguration.uploadGzipMinimumSize` and `UploadingTask.uploadGzipMinimumSize` say.
///
/// Only for servers that accept compressed requests (many do not), so the default is `.none`.
enum UploadCompression: Sendable, Hashable {
    /// Bodies are sent as they are.
    case none
    /// Bodies of at least `minimumSize` bytes (before compression) are gzipped through the system
    /// zlib; smaller ones are sent as they are, where gzip's overhead outweighs the saving.
    case gzip(minimumSize: Int)

    /// `.gzip` from `minimumSize` on, `.none` without one.
    init(gzipMinimumSize minimumSize: Int?) {
        self = minimumSize.map { .gzip(minimumSize: $0) } ?? .none
    }

    /// Whether a body of `size` bytes is compressed.
    func applies(toSize size: Int64) -> Bool {
        switch self {
        case .none: false
        case .gzip(let minimumSize): size >= Int64(minimumSize)
        }
    }

    /// The `Content-Encoding` of a gzipped body.
    static let gzipEncoding = "gzip"
}
