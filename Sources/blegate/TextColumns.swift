// SPDX-License-Identifier: MIT

/// Tables for people: a column of `width` characters.
func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - s.count))
    return right ? fill + s : s + fill
}

/// At most `n` characters, an ellipsis marking what was cut.
func clip(_ s: String, _ n: Int) -> String { s.count <= n ? s : String(s.prefix(n - 1)) + "…" }
