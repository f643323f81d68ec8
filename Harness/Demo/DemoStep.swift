@_spi(Transport) @_spi(Tools) import Convey

/// One part of the demo: a kind of task, run against the demo server.
///
/// To fill in a step whose feature has landed, replace its `run` with tasks that use the feature
/// and return `.behaved` or `.misbehaved`; the runner prints the wire, the hooks and the result.
struct DemoStep: Sendable {
    /// How a step went.
    enum Outcome: Sendable {
        /// It did what Convey promises; the text says what came back.
        case behaved(String)
        /// The feature has not landed in the library yet; the text says what is missing.
        case notAvailableYet(String)
        /// It did not do what Convey promises: a bug, or a server that is not httpbin.
        case misbehaved(String)
    }

    let title: String
    /// What the step shows, in one or two sentences.
    let explanation: String
    let run: @ConveyActor @Sendable (DemoContext) async -> Outcome
}
