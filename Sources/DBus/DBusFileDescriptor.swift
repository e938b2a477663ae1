#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A Unix file descriptor that travelled over D-Bus.
///
/// libdbus hands every received descriptor to the receiver as a fresh dup; this
/// class owns it and closes it exactly once: on `close()`, or when the last
/// reference goes away, unless ownership was moved out with `take()`.
/// Sending one does not give it away (libdbus dups it again for the wire).
public final class DBusFileDescriptor: Sendable, Hashable, CustomStringConvertible {
    private let state: Mutex<Int32>

    /// Takes ownership of `fd`.
    public init(owning fd: Int32) {
        state = Mutex(fd)
    }

    /// The descriptor, or -1 once closed or taken. Valid only while `self` lives.
    public var rawValue: Int32 { state.withLock { $0 } }

    /// Moves ownership to the caller, who must close the returned descriptor.
    public func take() -> Int32? {
        state.withLock { fd in
            defer { fd = -1 }
            return fd >= 0 ? fd : nil
        }
    }

    public func close() {
        if let fd = take() { _ = Glibc.close(fd) }
    }

    deinit {
        let fd = state.withLock { $0 }
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    public static func == (a: DBusFileDescriptor, b: DBusFileDescriptor) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "\(rawValue)" }
}
