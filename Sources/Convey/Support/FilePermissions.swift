/// The POSIX permissions a downloaded file gets.
///
/// Convey's own files (cache entries, recordings, partial downloads and their records) are
/// always owner-only. A downloaded file is owner-only too unless the app asks otherwise: it may
/// be a document only its user should read.
///
/// ```swift
/// try await FetchReport().download(to: file, permissions: .ownerWriteOthersRead)   // 0644
/// ```
public struct FilePermissions: Sendable, Hashable, CustomStringConvertible {
    /// The permission bits, `0o000` to `0o777`; other bits (set-user-ID, sticky…) are dropped.
    public let mode: Int

    /// Permissions with these bits, `0o600` for example; bits beyond `0o777` are dropped.
    public init(mode: Int) {
        self.mode = mode & 0o777
    }

    /// Read and write for the owner only (`0o600`): the default.
    public static let ownerOnly = FilePermissions(mode: 0o600)
    /// Read and write for the owner, read for everyone else (`0o644`), like a file a shell creates.
    public static let ownerWriteOthersRead = FilePermissions(mode: 0o644)

    /// The mode in octal, `0600`.
    public var description: String {
        let octal = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - octal.count)) + octal
    }
}
