// SPDX-License-Identifier: MIT

/// The id a new strap shows on the wall for staff to pair it: the last four hex digits
/// of its address (`A0:9E:1A:12:AB:CD` → `ABCD`), which `blegate pair --device` accepts.
/// Short enough to read off a TV; a clash among the straps in one room is told apart
/// by `blegate devices`.
public enum ShortID {
    public static func of(_ deviceID: String) -> String {
        let hex = deviceID.uppercased().filter(\.isHexDigit)
        return String(hex.suffix(4))
    }
}
