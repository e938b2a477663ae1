// SPDX-License-Identifier: MIT
import Timing

extension Duration {
    /// Shortest readable form for log lines and status: `250ms`, `2.5s`, `3m10s`.
    var readable: String {
        let s = seconds
        if s < 1 { return "\(Int((s * 1000).rounded()))ms" }
        if s < 60 { return s == s.rounded() ? "\(Int(s))s" : "\((s * 10).rounded() / 10)s" }
        let whole = Int(s.rounded())
        return whole % 60 == 0 ? "\(whole / 60)m" : "\(whole / 60)m\(whole % 60)s"
    }
}
