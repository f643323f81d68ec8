#if canImport(Glibc)
import Foundation
import Glibc

/// A loopback port whose connections never complete: it listens with a backlog of zero and
/// the backlog is already full, so new connection attempts wait until their connect timeout.
final class UnacceptingServer {
    let url: URL
    private var descriptors: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw URLError(.cannotCreateFile) }
        descriptors.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else { throw URLError(.cannotConnectToHost) }
        let port = UInt16(bigEndian: address.sin_port)
        guard let url = URL(string: "http://127.0.0.1:\(port)/never") else { throw URLError(.badURL) }
        self.url = url
        // Fill the backlog: these connect, and nothing after them can.
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard client >= 0 else { continue }
            descriptors.append(client)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
        }
        usleep(100_000)
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }
}
#endif
