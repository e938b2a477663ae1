// SPDX-License-Identifier: MIT
import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Starts child processes the one way blegate does (the private `dbus-daemon`, the
/// doctor's tools, tests and benchmarks): with only the descriptors handed over, and with
/// signals as a fresh process expects them.
///
/// Why not inherit: swift-nio opens its sockets without close-on-exec. A child spawned
/// while this process holds a listening socket keeps it listening after this process
/// closes it; connections then queue where no one accepts them and the port cannot be
/// bound again (a test backend's outage would not end while a `dbus-daemon` started
/// beside it is alive). Why reset signals: threads of the Swift runtime block most signals and
/// a child inherits the mask, so without a reset a daemon would ignore SIGTERM.
public enum Spawn {
    /// What one of the child's descriptors becomes.
    public enum Redirect: Sendable {
        /// `fd` opened on `path` with `flags` (and `mode` when creating).
        case open(Int32, path: String, flags: Int32, mode: mode_t = 0o600)
        /// `fd` a copy of this process's `source`.
        case copy(Int32, from: Int32)
    }

    /// Starts `path` with `arguments` (argv[0] is `path`), searching PATH when `path` has
    /// no slash. Descriptors not named in `redirects` are closed in the child from
    /// `keepBelow` up (3 keeps the standard ones as they are here). Returns the pid.
    public static func start(_ path: String, _ arguments: [String], redirects: [Redirect] = [],
                             keepBelow: Int32 = 3) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var highest: Int32 = keepBelow - 1
        for r in redirects {
            switch r {
            case let .open(fd, path, flags, mode):
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, mode)
                highest = max(highest, fd)
            case let .copy(fd, source):
                posix_spawn_file_actions_adddup2(&actions, source, fd)
                highest = max(highest, fd)
            }
        }
        // glibc ≥ 2.34; an older one leaves close-on-exec as the only guard.
        _ = clinux_spawn_close_from(&actions, highest + 1)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let words = [path] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = path.contains("/")
            ? posix_spawn(&pid, path, &actions, &attr, argv, environ)
            : posix_spawnp(&pid, path, &actions, &attr, argv, environ)
        guard rc == 0 else { throw SpawnError("cannot start \(path): \(String(cString: strerror(rc)))") }
        return pid
    }

    /// A pipe whose ends are not inherited by children spawned meanwhile (hand one over
    /// with `.copy`).
    public static func pipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw SpawnError("pipe failed: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// Runs `path` to its end with stdin from /dev/null and returns what it wrote to stdout
    /// (and stderr too with `mergeStderr`; else stderr stays this process's), at most
    /// `limit` bytes kept, and its exit status.
    public static func output(_ path: String, _ arguments: [String], mergeStderr: Bool,
                              limit: Int = 1 << 24) throws(SpawnError) -> (output: String, status: Int32) {
        let out = try pipe()
        var redirects: [Redirect] = [.open(0, path: "/dev/null", flags: O_RDONLY), .copy(1, from: out.write)]
        if mergeStderr { redirects.append(.copy(2, from: out.write)) }
        let pid: pid_t
        do {
            pid = try start(path, arguments, redirects: redirects)
        } catch {
            close(out.read)
            close(out.write)
            throw error
        }
        close(out.write)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = read(out.read, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if bytes.count < limit { bytes.append(contentsOf: buffer[0..<min(n, limit - bytes.count)]) }
        }
        close(out.read)
        return (String(decoding: bytes, as: UTF8.self), wait(pid))
    }

    /// Waits for `pid` and returns its exit status, or 128 + the signal that ended it.
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7F) == 0
        return exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

/// A child that could not be started, or a pipe that could not be made.
public struct SpawnError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
