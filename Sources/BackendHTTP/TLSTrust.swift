// SPDX-License-Identifier: MIT

/// Which certificates an https backend's certificate must chain to.
public enum TLSTrust: Sendable, Hashable {
    /// The system's trust roots (Debian's ca-certificates).
    case system
    /// The PEM certificates in this file only (a private CA, a test's own certificate).
    case pemFile(String)
}
