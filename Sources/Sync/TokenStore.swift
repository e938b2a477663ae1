// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Why the bearer token could not be read. Messages name the file, never its contents.
public struct TokenError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { message }
}

/// The backend's bearer token, read from `backend.token_file` (mode 0600).
///
/// The file is re-read when `reload()` is called or when its modification time, size or
/// inode changes, so an operator fixes a refused token by replacing the file; no restart.
/// The token never appears in descriptions, errors or logs.
public final class TokenStore: Sendable, CustomStringConvertible {
    private struct FileStamp: Equatable {
        var inode: UInt64
        var size: Int64
        var mtimeSeconds: Int
        var mtimeNanoseconds: Int
    }

    private struct State {
        var token: String?
        var stamp: FileStamp?
    }

    /// nil for a fixed token (tests, benchmarks).
    public let path: String?
    private let state: Mutex<State>

    /// A token read from `path`; call `reload()` before first use.
    public init(file path: String) {
        self.path = path
        self.state = Mutex(State())
    }

    /// A fixed token, or none (requests then carry no Authorization header).
    public init(token: String?) {
        self.path = nil
        self.state = Mutex(State(token: token))
    }

    /// The token to send, if any.
    public var token: String? { state.withLock { $0.token } }

    public var description: String { path.map { "token file \($0)" } ?? "fixed token" }

    /// Reads the file again. Returns whether the token differs from the one held before.
    /// On error the old token is dropped, so a removed file stops sending a stale token.
    @discardableResult
    public func reload() throws(TokenError) -> Bool {
        guard let path else { return false }
        do {
            let (token, stamp) = try Self.readToken(path)
            return state.withLock { s in
                let changed = s.token != token
                s.token = token
                s.stamp = stamp
                return changed
            }
        } catch {
            state.withLock { s in
                s.token = nil
                s.stamp = Self.stamp(path)
            }
            throw error
        }
    }

    /// Whether the file looks different from when it was last read (cheap: one stat).
    public func fileChanged() -> Bool {
        guard let path else { return false }
        let now = Self.stamp(path)
        return state.withLock { $0.stamp != now }
    }

    private static func stamp(_ path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileStamp(inode: UInt64(st.st_ino), size: Int64(st.st_size),
                         mtimeSeconds: Int(st.st_mtim.tv_sec), mtimeNanoseconds: Int(st.st_mtim.tv_nsec))
    }

    private static func readToken(_ path: String) throws(TokenError) -> (String, FileStamp) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw TokenError(path: path, message: "backend.token_file: cannot open \(path): \(reason). Example: token_file = \"/etc/blegate/token\" (mode 0600, the bearer token on one line)")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw TokenError(path: path, message: "backend.token_file: cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw TokenError(path: path, message: "backend.token_file: \(path) is not a regular file")
        }
        let mode = st.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw TokenError(path: path, message: "backend.token_file: \(path) has mode \(String(mode, radix: 8)), readable by others; the token must be private. Fix: chmod 600 \(path)")
        }
        guard st.st_size <= 16_384 else {
            throw TokenError(path: path, message: "backend.token_file: \(path) is \(st.st_size) bytes; a bearer token is one short line")
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TokenError(path: path, message: "backend.token_file: cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            count += n
        }
        let token = String(decoding: bytes[0..<count], as: UTF8.self).trimmingSpaces
        guard !token.isEmpty else {
            throw TokenError(path: path, message: "backend.token_file: \(path) is empty; put the bearer token the backend issued in it")
        }
        guard !token.contains(where: { $0 == "\n" || $0 == "\r" || $0 == " " }) else {
            throw TokenError(path: path, message: "backend.token_file: \(path) holds more than one word; it must contain only the bearer token")
        }
        let stamp = FileStamp(inode: UInt64(st.st_ino), size: Int64(st.st_size),
                              mtimeSeconds: Int(st.st_mtim.tv_sec), mtimeNanoseconds: Int(st.st_mtim.tv_nsec))
        return (token, stamp)
    }
}
