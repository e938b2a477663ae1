// SPDX-License-Identifier: MIT
import SystemSupport
#if canImport(Glibc)
import Glibc
#endif

/// The little the doctor asks of the host besides files: run a tool, name the user.
package enum DoctorHost {
    /// Runs `argv` (no shell) with stderr merged into stdout; nil if it could not be
    /// started. Output is capped: these tools print a line or two.
    package static func run(_ argv: [String]) -> (output: String, status: Int32)? {
        try? Spawn.output(argv[0], Array(argv.dropFirst()), mergeStderr: true, limit: 65536)
    }

    package static func userName(uid: uid_t) -> String {
        guard let pw = getpwuid(uid) else { return "uid \(uid)" }
        return String(cString: pw.pointee.pw_name)
    }

    /// Names of every group `user` (with primary group `gid`) belongs to.
    package static func groupNames(user: String, gid: gid_t) -> [String] {
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

    package static func hostName() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "blegate" }
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The policy files dbus-daemon reads for the system bus, in its order.
    package static func systemBusPolicy() -> DBusPolicy {
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
