/// Which response statuses end a task with an `HTTPError` and which come back as responses.
///
/// A task chooses its rule with `statusRule`; the default follows the server's
/// `reportBadHTTPStatusAsError` (`.standard` when on, `.never` when off).
///
/// ```swift
/// struct FetchReport: ServerTask {
///     var path: String { "reports/42" }
///     // 404 means "not ready yet": read it as a response; every other non-2xx still throws.
///     var statusRule: StatusRule { .standard.returning(404) }
/// }
///
/// struct SaveDraft: ServerTask {
///     var path: String { "drafts/7" }
///     var method: HTTPMethod { .put }
///     // Only server errors throw; a 409 comes back with its body to read.
///     var statusRule: StatusRule { .throwing([.serverError]) }
/// }
/// ```
///
/// A code listed with `returning` always comes back; one listed with `throwing` always throws;
/// any other code throws when its class is in `throwingClasses`.
public struct StatusRule: Sendable, Hashable {
    /// The status classes that throw.
    public var throwingClasses: Set<ResponseType>
    /// Codes that throw whatever their class.
    public var throwingCodes: Set<Int>
    /// Codes that come back as responses whatever their class; they win over `throwingCodes`.
    public var returnedCodes: Set<Int>

    /// Creates a rule: the classes that throw, then codes that throw or come back regardless.
    public init(throwingClasses: Set<ResponseType>, throwingCodes: Set<Int> = [], returnedCodes: Set<Int> = []) {
        self.throwingClasses = throwingClasses
        self.throwingCodes = throwingCodes
        self.returnedCodes = returnedCodes
    }

    /// Every status outside 200–299 throws: the default while `reportBadHTTPStatusAsError` is on.
    public static let standard = StatusRule(throwingClasses: [.info, .redirect, .clientError, .serverError, .unknown])

    /// No status throws: every response comes back, as with `reportBadHTTPStatusAsError` off.
    public static let never = StatusRule(throwingClasses: [])

    /// Only statuses of these classes throw.
    public static func throwing(_ classes: Set<ResponseType>) -> StatusRule {
        StatusRule(throwingClasses: classes)
    }

    /// This rule, with these codes coming back as responses.
    public func returning(_ codes: Int...) -> StatusRule {
        var rule = self
        rule.returnedCodes.formUnion(codes)
        return rule
    }

    /// This rule, with these codes throwing.
    public func throwing(_ codes: Int...) -> StatusRule {
        var rule = self
        rule.throwingCodes.formUnion(codes)
        return rule
    }

    /// Whether a response with this status ends the task with an `HTTPError`.
    public func throwsError(forStatus code: Int) -> Bool {
        if returnedCodes.contains(code) { return false }
        if throwingCodes.contains(code) { return true }
        return throwingClasses.contains(ResponseType(statusCode: code))
    }
}

/// A run's status decision, made once from the task's `statusRule` and `followsRedirects`: the
/// runner throws `HTTPError` by it, and a delivery reads it to know which bodies are errors (kept
/// in memory for the error) and which are the response's (a file, a stream).
struct StatusCheck: Sendable {
    let rule: StatusRule
    let followsRedirects: Bool

    @ConveyActor
    init<T: DownloadingTask>(task: T) {
        rule = task.statusRule
        followsRedirects = task.followsRedirects
    }

    /// Whether a response with this status ends the attempt with an `HTTPError`. A redirect the
    /// task chose not to follow comes back unless its code is named in `throwingCodes`.
    func throwsError(forStatus code: Int) -> Bool {
        if !followsRedirects, HTTPStatus.isRedirect(code), !rule.throwingCodes.contains(code) { return false }
        return rule.throwsError(forStatus: code)
    }
}
