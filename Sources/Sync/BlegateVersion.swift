// SPDX-License-Identifier: MIT

/// The gateway's version as it introduces itself to the backend (`Blegate-Version`), so a
/// backend can tell which gateways still run an old build.
public enum BlegateVersion {
    public static let current = "1.0.0"
}
