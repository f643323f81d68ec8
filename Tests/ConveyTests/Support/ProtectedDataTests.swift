import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

/// When a failure to open one of Convey's files means "not now" (a locked device) and when it is an
/// error: only a permission error, and only where the system has data protection and does not say
/// that protected data is available.
@Suite("Protected data")
struct ProtectedDataTests {
    @Test func aPermissionErrorIsALockedDeviceOnlyWhereTheSystemSaysProtectedDataIsNotAvailable() {
        for code in [EPERM, EACCES] {
            #expect(ProtectedData.meansUnavailable(code, availability: .unavailable))
            #expect(ProtectedData.meansUnavailable(code, availability: .unknown))
            #expect(!ProtectedData.meansUnavailable(code, availability: .available))
            #expect(!ProtectedData.meansUnavailable(code, availability: .absent))
        }
        for code in [ENOENT, EIO, ENOSPC, nil] {
            #expect(!ProtectedData.meansUnavailable(code, availability: .unavailable))
        }
    }

    @Test func onLinuxThereIsNoDataProtectionUnlessATestLocksTheDevice() throws {
        #if os(Linux)
        #expect(ProtectedData.systemAvailability == .absent)
        #endif
        let folder = "/tmp/convey-protected-\(UUID().uuidString)"
        let file = folder + "/entry"
        #expect(!ProtectedData.isUnavailable(EPERM, path: file))
        let denied = FileAccessFaults.inject(EPERM, under: folder)
        #expect(!ProtectedData.isUnavailable(EPERM, path: file))
        denied.remove()
        let locked = FileAccessFaults.lockDevice(failing: EACCES, under: folder)
        #expect(ProtectedData.isUnavailable(EACCES, path: file))
        #expect(ProtectedData.isUnavailable(FileFailure(path: file, action: "read", code: EPERM)))
        #expect(!ProtectedData.isUnavailable(EACCES, path: "/tmp/elsewhere/entry"))
        locked.remove()
        #expect(!ProtectedData.isUnavailable(EACCES, path: file))
    }
}
