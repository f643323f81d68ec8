import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// The real transports, for suites that must pass on each of them.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    #if os(Linux) && canImport(CConveyCurlShim)
    case curl
    #endif

    var testDescription: String { rawValue }

    func make() -> any ConveyTransport {
        switch self {
        case .urlSession: URLSessionTransport()
        #if os(Linux) && canImport(CConveyCurlShim)
        case .curl: CurlTransport()
        #endif
        }
    }
}
