import Testing

/// The suites that install a default server (`asDefault: true`), run one at a time: the default
/// server is one per process, and each of them relies on its own.
@Suite("The default server", .serialized)
enum DefaultServerSuites {}
