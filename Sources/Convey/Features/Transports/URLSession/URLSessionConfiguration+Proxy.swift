#if canImport(Darwin)
import Foundation
#if canImport(Network)
import Network
#endif

extension URLSessionConfiguration {
    /// Routes this configuration's connections as `proxy` says (Apple platforms only), as
    /// `URLSessionSettings` decided: `.environment` leaves the system's settings; `.direct` and an
    /// HTTP proxy set `connectionProxyDictionary`; SOCKS5, and an HTTP proxy that tunnels plain
    /// http too, set `proxyConfigurations` with the credentials applied (where it exists; before
    /// that the transport refused them). An HTTP proxy's credentials answer its 407 challenge
    /// instead (`SessionDelegate`).
    func route(through proxy: ProxyConfiguration) {
        if let dictionary = URLSessionSettings.connectionProxyDictionary(for: proxy) {
            connectionProxyDictionary = Dictionary(uniqueKeysWithValues: dictionary.map { (AnyHashable($0.key), $0.value.object) })
            return
        }
        guard case .through(let through) = proxy.route else { return }
        #if canImport(Network)
        if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *) {
            guard let number = UInt16(exactly: through.port), let port = NWEndpoint.Port(rawValue: number) else { return }
            let endpoint = NWEndpoint.hostPort(host: NWEndpoint.Host(through.host), port: port)
            var configuration = through.kind == .socks5
                ? Network.ProxyConfiguration(socksv5Proxy: endpoint)
                : Network.ProxyConfiguration(httpCONNECTProxy: endpoint, tlsOptions: nil)
            if let username = through.username { configuration.applyCredential(username: username, password: through.password ?? "") }
            proxyConfigurations = [configuration]
        }
        #endif
    }
}
#endif
