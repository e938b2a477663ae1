// SPDX-License-Identifier: MIT

/// Sizes in the config: a bare integer is bytes; a string carries a unit. Binary units
/// (`KiB`, `MiB`, `GiB`, `TiB`) are the documented ones; decimal `kB`/`MB`/`GB`/`TB` and a
/// plain `B` are accepted too, because people type both.
public enum ByteSize {
    /// The byte count a string denotes, or nil when it is not of the accepted form.
    public static func parse(_ text: String) -> Int64? {
        let s = text.trimmingSpaces()
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
            ("kB", 1000), ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
            ("B", 1),
        ]
        for (suffix, scale) in units where s.hasSuffix(suffix) {
            let number = String(s.dropLast(suffix.count)).trimmingSpaces()
            guard let value = ConfigDuration.parseDecimal(number) else { return nil }
            return bytes(value * scale)
        }
        // Digits alone: bytes.
        if let value = ConfigDuration.parseDecimal(s), !s.utf8.contains(UInt8(ascii: ".")) { return bytes(value) }
        return nil
    }

    static func bytes(_ value: Double) -> Int64? {
        guard value.isFinite, value >= 0, value < 9e18 else { return nil }
        return Int64(value.rounded())
    }

    /// `"512MiB"`, `"1.5GiB"`, `"900B"`: for messages and stats.
    public static func format(_ bytes: Int64) -> String {
        let units: [(String, Double)] = [("TiB", 1_099_511_627_776), ("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1024)]
        for (unit, size) in units where Double(bytes) >= size {
            let v = Double(bytes) / size
            let rounded = (v * 10).rounded() / 10
            return rounded == rounded.rounded() ? "\(Int64(rounded))\(unit)" : "\(rounded)\(unit)"
        }
        return "\(bytes)B"
    }
}
