#if canImport(Synchronization) && os(Linux) && canImport(Glibc)
import Glibc

/// Tells ThreadSanitizer, when the process runs under it, the order an `InlineLock` makes.
///
/// The standard library's `Mutex` locks with futex calls the sanitizer does not intercept, so it
/// would see no order between the threads taking the lock and report every access under it as a
/// race. Its annotations, `__tsan_acquire` and `__tsan_release`, are looked up at run time: a
/// process built with `-sanitize=thread` has them, any other finds none and pays one load per lock.
enum ThreadSanitizerOrder {
    private typealias Annotation = @convention(c) (UnsafeRawPointer?) -> Void

    private static let acquire: Annotation? = lookup("__tsan_acquire")
    private static let release: Annotation? = lookup("__tsan_release")

    /// The lock at `address` was just taken.
    @inline(__always)
    static func acquired(_ address: UnsafeRawPointer) {
        if let acquire { acquire(address) }
    }

    /// The lock at `address` is about to be let go of.
    @inline(__always)
    static func releasing(_ address: UnsafeRawPointer) {
        if let release { release(address) }
    }

    private static func lookup(_ name: String) -> Annotation? {
        // A null handle is RTLD_DEFAULT: the whole process's symbols.
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: Annotation.self)
    }
}
#endif
