import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reason phrases for status lines: `OK`, `Not Found`.
enum ReasonPhrase {
    static func text(_ status: Int) -> String {
        let phrase = HTTPURLResponse.localizedString(forStatusCode: status).capitalized
        return phrase == "Ok" ? "OK" : phrase
    }
}
