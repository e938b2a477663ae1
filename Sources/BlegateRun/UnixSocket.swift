// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Why the status socket could not be opened or used.
public struct StatusSocketError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// errno of the failed call, when there was one.
    public var errno: Int32?

    public init(path: String, message: String, errno: Int32? = nil) {
        self.path = path
        self.message = message
        self.errno = errno
    }

    public var description: String { "status socket \(path): \(message)" }

    /// Nobody listens: no file, or a file left behind by a gateway that died.
    public var nobodyListening: Bool { errno == ENOENT || errno == ECONNREFUSED }
}

/// The few blocking socket calls the status socket needs (AF_UNIX, SOCK_STREAM).
enum UnixSocket {
    static func address(_ path: String) throws(StatusSocketError) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw StatusSocketError(path: path, message: "the path must be 1 to \(capacity - 1) bytes long. Example: socket = \"/run/blegate/status.sock\"")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return addr
    }

    static func error(_ path: String, _ what: String) -> StatusSocketError {
        let e = Glibc.errno
        return StatusSocketError(path: path, message: "\(what): \(String(cString: strerror(e)))", errno: e)
    }

    /// Connects to a listening socket.
    static func connect(_ path: String) throws(StatusSocketError) -> Int32 {
        var addr = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw error(path, "cannot create a socket") }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let e = error(path, "cannot connect")
            close(fd)
            throw e
        }
        return fd
    }

    /// Binds and listens. A socket file nobody answers on (left by a gateway that was
    /// killed) is replaced; one that answers means another gateway runs, and is refused.
    static func listen(_ path: String, mode: mode_t) throws(StatusSocketError) -> Int32 {
        var addr = try address(path)
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw StatusSocketError(path: path, message: "exists and is not a socket; remove it or set status.socket to another path")
            }
            if let fd = try? connect(path) {
                close(fd)
                throw StatusSocketError(path: path, message: "another blegate is already running and answering on it (blegate status shows it); stop it first", errno: EADDRINUSE)
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw error(path, "cannot create a socket") }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let e = error(path, "cannot bind (does its directory exist and is it writable?)")
            close(fd)
            throw e
        }
        chmod(path, mode)
        guard Glibc.listen(fd, 512) == 0 else {
            let e = error(path, "cannot listen")
            close(fd)
            unlink(path)
            throw e
        }
        return fd
    }

    /// Waits up to `timeoutMilliseconds` for `fd` to become readable.
    static func readable(_ fd: Int32, timeoutMilliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, timeoutMilliseconds) > 0
    }

    /// Reads up to the first newline (or end of stream), at most `limit` bytes, giving up
    /// after `timeoutMilliseconds` of silence. nil on timeout, error or overflow.
    static func readLine(_ fd: Int32, limit: Int, timeoutMilliseconds: Int32) -> [UInt8]? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while out.count <= limit {
            guard readable(fd, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                return nil
            }
            if n == 0 { return out }
            if let nl = chunk[0..<n].firstIndex(of: UInt8(ascii: "\n")) {
                out += chunk[0..<nl]
                return out
            }
            out += chunk[0..<n]
        }
        return nil
    }

    /// Writes everything; false when the peer went away.
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
