// SPDX-License-Identifier: MIT
extension Duration {
    /// Shortest readable form for log lines, status and the watchdog: `250ms`, `2.5s`, `3m10s`.
    public var readable: String {
        let s = seconds
        if s < 1 { return "\(Int((s * 1000).rounded()))ms" }
        if s < 60 { return s == s.rounded() ? "\(Int(s))s" : "\((s * 10).rounded() / 10)s" }
        let whole = Int(s.rounded())
        return whole % 60 == 0 ? "\(whole / 60)m" : "\(whole / 60)m\(whole % 60)s"
    }
}
