#if os(Linux) && canImport(CConveyCurlShim)
/// A WebSocket's byte stream on Linux: libcurl connects (TCP, TLS, proxies), Convey frames.
extension CurlRawConnection: WebSocketWire {}
#endif
