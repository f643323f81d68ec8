import Foundation

/// Keeping credentials out of the outbox's folder.
///
/// At enqueue, a task's fields are split: a credential field (`CrossOriginCredentials.isCredential`:
/// the fields `Redaction.standard` or the server's own `redaction` hides) that the server's
/// `headers(for:)` supplied is left out, since every attempt asks the server again; one the task
/// set itself is refused, since storing it would put a secret on disk and leaving it out would
/// send the request without it. URL user info and credential query parameters are refused too.
///
/// After delivery, any credential value an attempt sent that the server echoed back in its body
/// (an echo service does) is masked before the body is kept.
enum OutboxCredentials {
    /// The task's fields without the credentials the server supplied; throws for one the task set itself.
    static func storableFields(_ taskFields: Headers, serverSupplied: Headers, redaction: Redaction) throws(ConveyError) -> [Header] {
        var kept: [Header] = []
        for field in taskFields {
            guard CrossOriginCredentials.isCredential(field.name, redaction) else {
                kept.append(field)
                continue
            }
            let fromServer = serverSupplied.contains { $0.name.caseInsensitiveCompare(field.name) == .orderedSame && $0.value == field.value }
            guard fromServer else { throw .credentialRefused(field: "header \(field.name)") }
        }
        return kept
    }

    /// Throws when the URL carries a credential: user info, or a query parameter `redaction` hides.
    static func checkURL(_ url: URL, redaction: Redaction) throws(ConveyError) {
        if url.user != nil || url.password != nil { throw .credentialRefused(field: "URL user info") }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        if let secret = items.first(where: { Redaction.standard.hidesQueryParameter($0.name) || redaction.hidesQueryParameter($0.name) }) {
            throw .credentialRefused(field: "query parameter \(secret.name)")
        }
    }

    /// The secret values of a request's credential fields, as a body may echo them: whole values,
    /// the token after an auth scheme (`Bearer abc` → `abc`), and each cookie's value.
    static func secretValues(of fields: [Header], redaction: Redaction) -> [String] {
        var values: [String] = []
        for field in fields where CrossOriginCredentials.isCredential(field.name, redaction) {
            values.append(field.value)
            if let space = field.value.firstIndex(of: " ") { values.append(String(field.value[field.value.index(after: space)...])) }
            if field.name.caseInsensitiveCompare("Cookie") == .orderedSame {
                for pair in field.value.split(separator: ";") {
                    if let equals = pair.firstIndex(of: "=") { values.append(String(pair[pair.index(after: equals)...])) }
                }
            }
        }
        // Short values would mask ordinary text by chance; longest first, so a whole value is masked before its parts.
        return Set(values.map { $0.trimmingCharacters(in: .whitespaces) }).filter { $0.utf8.count >= 6 }.sorted { $0.utf8.count > $1.utf8.count }
    }

    /// `body` with every occurrence of each secret replaced by `Redaction.mask`.
    static func masking(_ secrets: [String], in body: Data) -> Data {
        guard !secrets.isEmpty, !body.isEmpty else { return body }
        var result = body
        let mask = Data(Redaction.mask.utf8)
        for secret in secrets {
            let needle = Data(secret.utf8)
            var searchStart = result.startIndex
            while let found = result.range(of: needle, in: searchStart..<result.endIndex) {
                result.replaceSubrange(found, with: mask)
                searchStart = found.lowerBound + mask.count
            }
        }
        return result
    }
}
