extension HARFixtures {
    /// What happens to a request, by whether the file answers it.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Answer from the file only: a request no entry answers fails with
        /// `ConveyError.noRecordedAnswer`. Nothing is sent, nothing is written.
        case replay
        /// Answer from the file; send a request no entry answers to the network, writing nothing.
        case passThrough
        /// Record once, replay always: answer from the file; send a request no entry answers
        /// (or whose entries have all answered) to the network, and append the exchange to the
        /// file, so the next run answers it offline.
        case record
        /// Send every request to the network and append every exchange to the file: a live run
        /// written as HAR, each retry and each followed redirect an entry of its own.
        case capture
    }
}
