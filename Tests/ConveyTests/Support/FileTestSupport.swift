import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The permission bits of the item at `url`, not following a link there.
func permissions(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
    return try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
}

/// Whether a symbolic link sits at `url`.
func isSymbolicLink(_ url: URL) -> Bool {
    let attributes = try? FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
    return attributes?[.type] as? FileAttributeType == .typeSymbolicLink
}

/// A file someone else cares about, outside the folder under test, and a link to it planted at `link`.
struct PlantedLink {
    static let victimContents = Data("the victim's own bytes\n".utf8)
    let victim: URL
    let link: URL

    /// Creates the victim in `victimFolder` and the link at `link`.
    init(at link: URL, victimFolder: URL) throws {
        victim = victimFolder.appending(path: "victim-\(UUID().uuidString)")
        self.link = link
        try Self.victimContents.write(to: victim)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
    }

    /// Whether the victim still holds exactly what it held.
    var victimIsUntouched: Bool { (try? Data(contentsOf: victim)) == Self.victimContents }
}

/// Makes a FIFO at `url`.
func makeFIFO(at url: URL) throws {
    guard mkfifo(url.path(percentEncoded: false), 0o600) == 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
}
