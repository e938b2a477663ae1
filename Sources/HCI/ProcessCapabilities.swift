// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// The process's effective capabilities, as the kernel shows them in
/// `/proc/self/status`. The self-healing path asks this before an HCI reset, so a
/// service installed without `CAP_NET_ADMIN` (the default unit) never tries and fails
/// one every stall; `blegate doctor` reports it.
public struct ProcessCapabilities: Sendable, Hashable {
    /// Bit n set = capability n effective (CapEff).
    public var effective: UInt64

    public init(effective: UInt64) { self.effective = effective }

    /// linux/capability.h: CAP_NET_ADMIN is 12.
    public static let netAdminBit = 12

    public var hasNetAdmin: Bool { effective & (1 << UInt64(Self.netAdminBit)) != 0 }

    /// The calling process's capabilities.
    public static func current() throws(CapabilityError) -> ProcessCapabilities {
        guard let f = fopen("/proc/self/status", "r") else {
            throw CapabilityError(message: "cannot open /proc/self/status: \(String(cString: strerror(errno))); is /proc mounted?")
        }
        defer { fclose(f) }
        var text = ""
        var buf = [CChar](repeating: 0, count: 512)
        while fgets(&buf, Int32(buf.count), f) != nil {
            text += String(decoding: buf[0..<strlen(buf)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return try parse(status: text)
    }

    /// Reads the `CapEff:` line of a /proc/PID/status text (16 hex digits).
    public static func parse(status: String) throws(CapabilityError) -> ProcessCapabilities {
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let value = line.dropFirst("CapEff:".count).drop { $0 == " " || $0 == "\t" }
            guard !value.isEmpty, value.count <= 16, let bits = UInt64(value, radix: 16) else {
                throw CapabilityError(message: "unreadable CapEff line in /proc/self/status: \"\(line)\"")
            }
            return ProcessCapabilities(effective: bits)
        }
        throw CapabilityError(message: "no CapEff line in /proc/self/status")
    }
}

public struct CapabilityError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
