/// curl options the harness does not have, each with what to use instead: said when one is
/// given, and listed in `convey-harness help options` and Docs/harness.md.
enum CurlOnlyOptions {
    /// curl's spellings and what to use instead, in the order listed.
    static let entries: [(names: [String], instead: String)] = [
        (["-X", "--request"], "the command names the method: convey-harness post|put|patch|delete URL; -I sends HEAD"),
        (["-i", "--include"], "the status line and headers are printed by default; --body-only prints the body alone, as curl does"),
        (["-D", "--dump-header"], "not supported: the headers go to stdout (to stderr with -o); --output-json has them"),
        (["-c", "--cookie-jar"], "not supported: cookies a server sets are kept for the run (a redirect followed with -L sends them), never written"),
        (["-O", "--remote-name"], "not supported: name the file with -o FILE"),
        (["-G", "--get"], "use --url-query NAME=VALUE"),
        (["-T", "--upload-file"], "use put URL --data-binary @FILE"),
        (["-r", "--range"], "use -H 'Range: bytes=FIRST-LAST'"),
        (["-y", "--speed-time", "-Y", "--speed-limit"], "--timeout SECONDS fails an attempt that waits longer than that for data"),
        (["-#", "--progress-bar"], "use --progress"),
        (["--no-progress-meter"], "use --no-progress"),
        (["--trace", "--trace-ascii"], "use -v, or --echo full for Convey's echo"),
        (["-K", "--config", "-q", "--disable"], "the harness reads no configuration file"),
        (["-j", "--junk-session-cookies"], "not supported: the harness keeps no cookies between runs"),
        (["--url"], "give the URL (or a PATH under --remote) after the command"),
        (["-V"], "use --version"),
    ]

    /// What to use instead of curl's `name`, or `nil` when curl has no such option either.
    static func hint(for name: String) -> String? {
        entries.first { $0.names.contains(name) }?.instead
    }
}
