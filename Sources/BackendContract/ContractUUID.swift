// SPDX-License-Identifier: MIT

/// The contract's ids (records, samples, workouts, profile metrics): UUID text, 8-4-4-4-12
/// hex. One check for every backend that judges them (the test backend, blegate-server).
public enum ContractUUID {
    public static func isValid(_ s: String) -> Bool {
        guard s.utf8.count == 36 else { return false }
        for (i, c) in s.utf8.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else {
                guard (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) else { return false }
            }
        }
        return true
    }
}
