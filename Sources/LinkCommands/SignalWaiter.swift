// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The write end of the self-pipe the signal handler writes to (set once, before
/// the handlers are installed; only read by the handler).
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// SIGINT/SIGTERM end a command cleanly (simulate releases its names, stream its
/// straps; exit status 0). The
/// handler only writes a byte to a pipe (async-signal-safe); a task polls it.
public struct SignalWaiter: Sendable {
    let readFD: Int32

    public static func install() -> SignalWaiter {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        signalPipeWrite = fds[1]
        signal(SIGINT) { _ in
            var b: UInt8 = 1
            _ = write(signalPipeWrite, &b, 1)
        }
        signal(SIGTERM) { _ in
            var b: UInt8 = 1
            _ = write(signalPipeWrite, &b, 1)
        }
        return SignalWaiter(readFD: fds[0])
    }

    public func wait() async {
        while !Task.isCancelled {
            var b: UInt8 = 0
            if read(readFD, &b, 1) == 1 { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
