import Foundation

extension ResponseStream where Element == Data {
    /// The body as lines of text, at most 1 MiB each (`limited(to:)` sets another limit).
    public var lines: ResponseStream<String> {
        ResponseStream<String>(lines: self, maximumLineLength: ResponseStream<String>.defaultMaximumLineLength)
    }
}

extension ResponseStream where Element == String {
    /// The longest line accepted by default: 1 MiB.
    public static var defaultMaximumLineLength: Int { 1 << 20 }

    /// The lines of the body `chunks` reads.
    fileprivate init(lines chunks: ResponseStream<Data>, maximumLineLength: Int) {
        self.init(body: chunks.body) {
            LineReader(chunks.makeAsyncIterator(), maximumLineLength: maximumLineLength, url: chunks.url)
        }
    }

    /// The same lines with another length limit, in bytes.
    public func limited(to maximumLineLength: Int) -> ResponseStream<String> {
        // Every stream of lines reads a body.
        guard let body else { return self }
        return ResponseStream(lines: ResponseStream<Data>(lifetime: body), maximumLineLength: maximumLineLength)
    }
}
