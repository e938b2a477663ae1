// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket (close-on-exec) bound to 127.0.0.1 on a port the kernel chose, and that
/// port: a test's own server listens on it, or holds it unlistened as a port that refuses.
public func boundLoopbackSocket() throws -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
    }
    guard bound else {
        let message = String(cString: strerror(errno))
        close(fd)
        throw TestSupportError("bind on loopback: \(message)")
    }
    return (fd, UInt16(bigEndian: addr.sin_port))
}

/// A loopback port free now (bound, then let go), for a server the test starts by port
/// number, so that when restarted it is at the address its clients know.
public func freeLoopbackPort() throws -> Int {
    let (fd, port) = try boundLoopbackSocket()
    close(fd)
    return Int(port)
}
