// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// An adapter's rfkill switch as sysfs shows it (`/sys/class/bluetooth/hciN/rfkillM`):
/// read by `blegate doctor` and by scan and stream when an adapter is off. A soft block is
/// undone with `rfkill unblock`; a hard block is a physical switch or the firmware, and no
/// command helps.
public struct RFKillSwitch: Sendable, Hashable {
    /// `rfkill0`.
    public var name: String
    public var soft: Bool
    public var hard: Bool

    public var blocked: Bool { soft || hard }

    public init(name: String, soft: Bool, hard: Bool) {
        self.name = name
        self.soft = soft
        self.hard = hard
    }

    /// The switch of adapter `interface`, or nil if it has none (simulated adapters, or
    /// a kernel without rfkill). `root` goes before every path (tests lay out a tree).
    public static func of(_ interface: String, root: String = "") -> RFKillSwitch? {
        let dir = root + "/sys/class/bluetooth/\(interface)"
        guard let d = opendir(dir) else { return nil }
        var entries: [String] = []
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("rfkill") { entries.append(name) }
        }
        closedir(d)
        guard let entry = entries.sorted().first else { return nil }
        return RFKillSwitch(name: entry, soft: firstByte("\(dir)/\(entry)/soft") == UInt8(ascii: "1"),
                            hard: firstByte("\(dir)/\(entry)/hard") == UInt8(ascii: "1"))
    }

    /// The first byte of a sysfs flag file ("0\n" or "1\n"), nil when it cannot be read.
    private static func firstByte(_ path: String) -> UInt8? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        let c = fgetc(f)
        return c == EOF ? nil : UInt8(truncatingIfNeeded: c)
    }
}
