extension Result {
    /// The error, for `.failure`; `nil` for `.success`.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
