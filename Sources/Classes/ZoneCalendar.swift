// SPDX-License-Identifier: MIT
import Timing
#if canImport(Glibc)
import Glibc
#endif

/// Local days from a time zone file (the system's by default): a class at 07:00 starts at
/// 07:00 on the gym's clock, across daylight-saving changes.
///
/// Read from tzdata's compiled files rather than through Foundation's `TimeZone`, which
/// loads ICU and its data into a long-running gateway for this one conversion.
public struct ZoneCalendar: LocalCalendar {
    private let zone: TZif

    /// UTC: no offset, no daylight time.
    public static let utc = ZoneCalendar(zone: TZif(transitions: [], offsets: [], initialOffset: 0, rule: nil))

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
    public static func system(environment tz: String? = Self.environmentTZ()) -> ZoneCalendar {
        if let tz, !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = try? ZoneCalendar(file: name) { return zone }
            if let rule = PosixTimeZoneRule(tz) {
                return ZoneCalendar(zone: TZif(transitions: [], offsets: [], initialOffset: rule.standard, rule: rule))
            }
        }
        return (try? ZoneCalendar(file: "/etc/localtime")) ?? .utc
    }

    public static func environmentTZ() -> String? {
        #if canImport(Glibc)
        guard let value = getenv("TZ") else { return nil }
        return String(cString: value)
        #else
        return nil
        #endif
    }

    /// The UTC offset in seconds at a Unix instant (ms).
    public func offsetSeconds(at ms: Int64) -> Int {
        Int(zone.offset(at: Self.floorSeconds(ms)))
    }

    public func day(of ms: Int64) -> LocalDay {
        let t = Self.floorSeconds(ms)
        let days = CivilDays.days(seconds: t + Int64(zone.offset(at: t)))
        let date = CivilDays.date(days: days)
        return LocalDay(year: date.year, month: date.month, day: date.day,
                        weekday: ScheduledClass.Weekday(rawValue: CivilDays.weekday(days: days))!)
    }

    public func day(before d: LocalDay) -> LocalDay {
        let days = CivilDays.days(year: d.year, month: d.month, day: d.day) - 1
        let date = CivilDays.date(days: days)
        return LocalDay(year: date.year, month: date.month, day: date.day,
                        weekday: ScheduledClass.Weekday(rawValue: CivilDays.weekday(days: days))!)
    }

    /// A local time that occurs twice (the hour repeated when clocks go back) is the
    /// first; one that does not occur (the hour skipped when they go forward) is read
    /// with the offset before the change, so 02:30 on a night that jumps from 02:00 to
    /// 03:00 is 03:30: what Foundation's Calendar gives.
    public func instant(day d: LocalDay, secondsOfDay: Int) -> Int64 {
        let local = CivilDays.days(year: d.year, month: d.month, day: d.day) * 86_400 + Int64(secondsOfDay)
        // The offsets in force a day either side cover every change near this time.
        let before = Int64(zone.offset(at: local - 86_400 - 50_400))
        let after = Int64(zone.offset(at: local + 86_400 + 50_400))
        var candidates: [Int64] = []
        for offset in Set([before, after]) {
            let t = local - offset
            if Int64(zone.offset(at: t)) == offset { candidates.append(t) }
        }
        let t = candidates.min() ?? (local - before)
        return t * 1000
    }

    private static func floorSeconds(_ ms: Int64) -> Int64 {
        ms >= 0 ? ms / 1000 : (ms - 999) / 1000
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
