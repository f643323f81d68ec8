@_spi(Transport) @_spi(Tools) import Convey

/// Short descriptions of errors for demo output.
enum DemoText {
    /// `ConveyError.attemptTimedOut`, `HTTPError 404`, or the type name.
    static func errorName(_ error: any Error) -> String {
        if let http = error as? HTTPError { return "HTTPError \(http.statusCode)" }
        guard let convey = error as? ConveyError else { return String(describing: type(of: error)) }
        return "ConveyError." + convey.caseName
    }

    /// The name and the log detail.
    static func error(_ error: any Error) -> String {
        // A ConveyError's or HTTPError's description is its log detail.
        errorName(error) + ": " + String(describing: error)
    }
}
