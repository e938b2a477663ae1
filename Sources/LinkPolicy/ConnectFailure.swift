// SPDX-License-Identifier: MIT

/// What kind of failure a Connect (or a step right after it) was. Each kind earns its own
/// retry pace: an abort by the local controller is the everyday noise of BLE and is
/// retried soon, a timeout means the strap is probably out of range, "in progress" is our
/// own earlier attempt still running, and limited resources means the adapter is full.
public enum ConnectFailureKind: String, Sendable, Hashable, CaseIterable {
    /// `le-connection-abort-by-local`: the controller gave up (often while scanning, or a
    /// strap that stopped answering in the middle of the handshake).
    case abortByLocal = "abort-by-local"
    /// `InProgress`, or 5.66's `Failed "Operation already in progress"`.
    case inProgress = "in-progress"
    /// No reply in time (D-Bus NoReply/Timeout, or our own deadline), or BlueZ's
    /// `le-connection-abort-by-timeout`-style page timeouts.
    case timeout
    /// The controller or BlueZ has no room for another link (HCI 0x09/0x0D, ENOMEM, ...).
    case noResources = "no-resources"
    /// The adapter is off or not ready.
    case notReady = "not-ready"
    /// The device object is gone (removed by TemporaryTimeout, a restart, ...).
    case deviceGone = "device-gone"
    /// The link came up but the GATT objects needed never appeared.
    case gattMissing = "gatt-missing"
    /// Any other `org.bluez.Error.Failed`.
    case failed
    /// Anything else (bus errors, unknown names).
    case other

    /// Sorts a D-Bus error (name and message, as BlueZ sends them) into a kind. Kept on
    /// strings so that the policy stays pure Swift and testable without a bus.
    public static func classify(errorName: String, message: String) -> ConnectFailureKind {
        let m = message.lowercased()
        if m.contains("limited resources") || m.contains("connection limit") || m.contains("cannot allocate memory")
            || m.contains("no resources") || m.contains("resource temporarily unavailable") || m.contains("too many") {
            return .noResources
        }
        if errorName.hasSuffix(".InProgress") || m.contains("already in progress") || m.contains("in progress") {
            return .inProgress
        }
        if m.contains("abort-by-local") { return .abortByLocal }
        if errorName.hasSuffix(".NoReply") || errorName.hasSuffix(".Timeout") || errorName.hasSuffix(".TimedOut")
            || m.contains("timeout") || m.contains("timed out") || m.contains("page-timeout") {
            return .timeout
        }
        if errorName.hasSuffix(".NotReady") || m.contains("not ready") || m.contains("not powered") { return .notReady }
        if errorName.hasSuffix(".DoesNotExist") || errorName.hasSuffix(".UnknownObject") || errorName.hasSuffix(".UnknownMethod") {
            return .deviceGone
        }
        if errorName.hasSuffix(".Failed") { return .failed }
        return .other
    }
}
