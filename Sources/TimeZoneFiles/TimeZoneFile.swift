// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// A time zone read from tzdata's compiled files (TZif, RFC 8536) or a POSIX `TZ` rule.
///
/// Foundation's `TimeZone` knows named zones only through ICU (FoundationEssentials
/// alone answers nil for `TimeZone(identifier: "Europe/Berlin")`), and ICU's code and
/// data would be mapped into a long-running gateway for this one conversion.
public struct TimeZoneFile: Sendable {
    private let zone: TZif

    /// UTC: no offset, no daylight time.
    public static let utc = TimeZoneFile(zone: TZif(transitions: [], offsets: [], initialOffset: 0, rule: nil))

    private init(zone: TZif) {
        self.zone = zone
    }

    /// Why a zone could not be read.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// A zone from the bytes of its TZif file (`/usr/share/zoneinfo/Europe/Madrid`).
    public init(tzif bytes: [UInt8]) throws(FileError) {
        do {
            zone = try TZif(bytes: bytes)
        } catch {
            throw FileError(description: "cannot read the time zone: \(error.description)")
        }
    }

    /// A zone by its file, or by its name under /usr/share/zoneinfo.
    public init(file: String) throws(FileError) {
        let path = file.hasPrefix("/") ? file : "/usr/share/zoneinfo/" + file
        guard let bytes = Self.readFile(path) else { throw FileError(description: "cannot read the time zone file \(path)") }
        try self.init(tzif: bytes)
    }

    /// The system's zone as the C library finds it: `TZ` (a zone name, a file with a
    /// leading colon, or a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`), otherwise
    /// /etc/localtime; UTC when neither can be read.
    public static func system(environment tz: String? = Self.environmentTZ()) -> TimeZoneFile {
        if let tz, !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = try? TimeZoneFile(file: name) { return zone }
            if let rule = PosixTimeZoneRule(tz) {
                return TimeZoneFile(zone: TZif(transitions: [], offsets: [], initialOffset: rule.standard, rule: rule))
            }
        }
        return (try? TimeZoneFile(file: "/etc/localtime")) ?? .utc
    }

    public static func environmentTZ() -> String? {
        #if canImport(Glibc)
        guard let value = getenv("TZ") else { return nil }
        return String(cString: value)
        #else
        return nil
        #endif
    }

    /// The UTC offset in seconds at a Unix time in whole seconds.
    public func offset(at seconds: Int64) -> Int32 {
        zone.offset(at: seconds)
    }

    private static func readFile(_ path: String) -> [UInt8]? {
        #if canImport(Glibc)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return nil
        #else
        return nil
        #endif
    }
}
