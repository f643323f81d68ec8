/// The demo, in order: every kind of task Convey runs.
enum DemoSteps {
    static let all: [DemoStep] = [
        getWithQuery, typedDecode, decodingFailure, jsonUpload, formUpload, multipartUpload, httpErrorStatus,
        etagRevalidation, retryAfter503, attemptTimeout, totalTimeout, cancellation, cancelBySessionTag,
        failAllRequests, recording, harRoundTrip,
    ]
}
