#if canImport(Glibc)
import Glibc
#endif
import DBus
import Synchronization

/// The simulator's end of an AcquireNotify socketpair (AF_UNIX, SOCK_SEQPACKET):
/// one `send` per notification, as bluetoothd writes one datagram per ATT value.
final class AcquiredNotifySocket: Sendable {
    enum SendResult { case sent, wouldBlock, closed }

    private let fd: Mutex<Int32>

    /// Creates the pair; returns our end and the client's end (to send in the reply).
    static func makePair() throws(DBusError) -> (AcquiredNotifySocket, DBusFileDescriptor) {
        var fds: [Int32] = [-1, -1]
        let rc = fds.withUnsafeMutableBufferPointer { buf in
            socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, buf.baseAddress!)
        }
        guard rc == 0 else { throw BlueZError.failed(String(cString: strerror(errno))) }
        return (AcquiredNotifySocket(fd: fds[0]), DBusFileDescriptor(owning: fds[1]))
    }

    private init(fd: Int32) {
        self.fd = Mutex(fd)
    }

    deinit {
        let f = fd.withLock { $0 }
        if f >= 0 { Glibc.close(f) }
    }

    func send(_ bytes: [UInt8]) -> SendResult {
        fd.withLock { f in
            guard f >= 0 else { return .closed }
            let n = bytes.withUnsafeBytes { Glibc.send(f, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if n >= 0 { return .sent }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS { return .wouldBlock }
            return .closed
        }
    }

    /// True once the client closed its end (POLLHUP, or a read returning 0).
    /// Anything the client wrote is read and dropped, as bluetoothd does.
    func peerClosed() -> Bool {
        fd.withLock { f in
            guard f >= 0 else { return true }
            var p = pollfd(fd: f, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 0) > 0 else { return false }
            if p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return true }
            var buf = [UInt8](repeating: 0, count: 600)
            let n = buf.withUnsafeMutableBytes { recv(f, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            return n == 0
        }
    }

    /// Hangs up: the client's reads return 0 (what a lost link looks like to it).
    func close() {
        fd.withLock { f in
            if f >= 0 { Glibc.close(f) }
            f = -1
        }
    }
}

/// Who listens to one characteristic: StartNotify clients (by bus name) or the
/// single AcquireNotify socket. bluetoothd 5.66 keeps these mutually exclusive.
struct NotifySessions {
    var clients: [String] = []
    var acquired: AcquiredNotifySocket?

    var isEmpty: Bool { clients.isEmpty && acquired == nil }
}
