// SPDX-License-Identifier: MIT
#if canImport(Glibc)
import Glibc
#endif

/// Heart Rate Measurement notifications in a simulator payload log (docs/simulator.md):
/// all of them, and those whose `mono_ms` falls in a window. Scans bytes: a saturation
/// run logs a few hundred thousand lines, and JSON parsing each would take longer than
/// the run.
struct PayloadLogTally {
    var total = 0
    var inWindow = 0

    init(bytes: [UInt8], windowMilliseconds window: Range<Double>) {
        let uuid = Array(#""uuid":"00002a37-"#.utf8)
        let mono = Array(#""mono_ms":"#.utf8)
        var total = 0, inWindow = 0
        bytes.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
            guard let base = all.baseAddress else { return }
            var start = 0
            while start < all.count {
                let rest = all.count - start
                let end = memchr(base + start, 0x0A, rest).map { UnsafeRawPointer($0) - base } ?? all.count
                let line = UnsafeRawBufferPointer(rebasing: all[start..<end])
                start = end + 1
                guard Self.find(uuid, in: line) != nil else { continue }
                total += 1
                if let at = Self.find(mono, in: line), let t = Self.number(line, from: at + mono.count), window.contains(t) {
                    inWindow += 1
                }
            }
        }
        self.total = total
        self.inWindow = inWindow
    }

    /// How many distinct straps have Heart Rate notifications in the log: every strap is
    /// followed once each has one (whatever the client, blegate or bleak).
    static func straps(bytes: [UInt8]) -> Int {
        let uuid = Array(#""uuid":"00002a37-"#.utf8)
        let address = Array(#""address":""#.utf8)
        var seen = Set<[UInt8]>()
        bytes.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
            guard let base = all.baseAddress else { return }
            var start = 0
            while start < all.count {
                let end = memchr(base + start, 0x0A, all.count - start).map { UnsafeRawPointer($0) - base } ?? all.count
                let line = UnsafeRawBufferPointer(rebasing: all[start..<end])
                start = end + 1
                guard find(uuid, in: line) != nil, let at = find(address, in: line) else { continue }
                let from = at + address.count
                guard from + 17 <= line.count else { continue }
                seen.insert(Array(line[from..<(from + 17)]))
            }
        }
        return seen.count
    }

    private static func find(_ needle: [UInt8], in line: UnsafeRawBufferPointer) -> Int? {
        guard let first = needle.first, line.count >= needle.count else { return nil }
        var i = 0
        while i <= line.count - needle.count {
            if line[i] == first {
                var j = 1
                while j < needle.count, line[i + j] == needle[j] { j += 1 }
                if j == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// The decimal number (digits and one dot) starting at `from`.
    private static func number(_ line: UnsafeRawBufferPointer, from: Int) -> Double? {
        var whole = 0.0, scale = 0.0, i = from, digits = 0
        while i < line.count {
            let c = line[i]
            if c >= 0x30, c <= 0x39 {
                if scale == 0 { whole = whole * 10 + Double(c - 0x30) } else { whole += Double(c - 0x30) * scale; scale /= 10 }
                digits += 1
            } else if c == 0x2E, scale == 0 {
                scale = 0.1
            } else {
                break
            }
            i += 1
        }
        return digits > 0 ? whole : nil
    }
}
