// SPDX-License-Identifier: MIT
import DBus
import Doctor
#if canImport(Glibc)
import Glibc
#endif

/// The little the doctor asks of the host besides files: run a tool, name the user.
enum DoctorHost {
    /// Runs `argv` (no shell) with stderr merged into stdout; nil if it could not be
    /// started. Output is capped: these tools print a line or two.
    static func run(_ argv: [String]) -> (output: String, status: Int32)? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        // Not inherited by anything else spawned meanwhile: the read below ends only when
        // every write end is closed.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        ChildDescriptors.closeAll(from: 3, in: &actions)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, environ)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); return nil }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &buf, buf.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if bytes.count < 65536 { bytes.append(contentsOf: buf[0..<n]) }
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7F) == 0
        return (String(decoding: bytes, as: UTF8.self), exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
    }

    static func userName(uid: uid_t) -> String {
        guard let pw = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: pw.pointee.pw_name)
    }

    /// Names of every group `user` (with primary group `gid`) belongs to.
    static func groupNames(user: String, gid: gid_t) -> [String] {
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(user, gid, &groups, &count)
        }
        return groups.prefix(Int(max(0, count))).compactMap { g in
            getgrgid(g).map { String(cString: $0.pointee.gr_name) }
        }
    }

    static func hostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "blegate" }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The policy files dbus-daemon reads for the system bus, in its order.
    static func systemBusPolicy() -> DBusPolicy {
        var policy = DBusPolicy()
        let files = HostFiles()
        for dir in DBusPolicy.directories {
            for name in files.list(dir) where name.hasSuffix(".conf") {
                if let text = files.read("\(dir)/\(name)") { policy.add(xml: text, file: "\(dir)/\(name)") }
            }
        }
        return policy
    }
}
