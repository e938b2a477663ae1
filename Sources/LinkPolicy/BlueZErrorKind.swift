// SPDX-License-Identifier: MIT
import PrintableText

/// What a BlueZ error reply means, sorted from its D-Bus error name and message as
/// bluetoothd 5.66 words them. The one place that reads error texts: link policy, the
/// adapter controller and status all ask this, so a new BlueZ wording is taught once.
///
/// bluetoothd replaces the kernel's reason for a failed LE connection with its own
/// text (src/device.c), so a controller refusing a link for lack of resources
/// ("Connection Limit Exceeded", "Memory Capacity Exceeded") arrives as
/// `le-connection-abort-by-local`, exactly like a radio failure: no message tells them
/// apart, and `LinkLimit` learns capacity from where the refusals happen instead.
public enum BlueZErrorKind: String, Sendable, Hashable, CaseIterable {
    /// `InProgress`, or `Failed "Operation already in progress"` (EALREADY).
    case inProgress = "in-progress"
    /// `le-connection-abort-by-local`: the controller gave up or refused.
    case abortByLocal = "abort-by-local"
    /// No answer in time: D-Bus NoReply/Timeout, or a page/connection timeout.
    case timeout
    /// The adapter is off or not ready.
    case notReady = "not-ready"
    /// The adapter's radio is blocked by rfkill (5.66: `Failed "Blocked through rfkill"`).
    case rfkillBlocked = "rfkill-blocked"
    /// Nobody owns `org.bluez`: bluetoothd is not running (ServiceUnknown, NameHasNoOwner).
    case noBluetoothd = "no-bluetoothd"
    /// The operation needs a link that is not there.
    case notConnected = "not-connected"
    /// The object (device, adapter) is gone.
    case doesNotExist = "does-not-exist"
    /// AcquireNotify while bluetoothd still holds our previous socket.
    case notifyAcquired = "notify-acquired"
    case notSupported = "not-supported"
    case notPermitted = "not-permitted"
    /// StopDiscovery without a session of ours.
    case noDiscoveryStarted = "no-discovery-started"
    case alreadyExists = "already-exists"
    /// Any other `org.bluez.Error.Failed`.
    case failed
    case other

    public static func classify(name: String, message: String) -> BlueZErrorKind {
        let m = message.lowercased()
        if name.hasSuffix(".InProgress") || m.contains("in progress") { return .inProgress }
        if m.contains("abort-by-local") { return .abortByLocal }
        if name.hasSuffix(".NoReply") || name.hasSuffix(".Timeout") || name.hasSuffix(".TimedOut")
            || m.contains("timeout") || m.contains("timed out") {
            return .timeout
        }
        if name.hasSuffix(".ServiceUnknown") || name.hasSuffix(".NameHasNoOwner") { return .noBluetoothd }
        if m.contains("rfkill") { return .rfkillBlocked }
        if name.hasSuffix(".NotReady") || m.contains("not ready") || m.contains("not-powered") || m.contains("not powered") {
            return .notReady
        }
        if m.contains("notify acquired") { return .notifyAcquired }
        if name.hasSuffix(".NotConnected") || m.contains("not connected") { return .notConnected }
        if name.hasSuffix(".DoesNotExist") || name.hasSuffix(".UnknownObject") || name.hasSuffix(".UnknownMethod") {
            return .doesNotExist
        }
        if name.hasSuffix(".NotSupported") { return .notSupported }
        if name.hasSuffix(".NotPermitted") || name.hasSuffix(".NotAuthorized") { return .notPermitted }
        if name.hasSuffix(".AlreadyExists") { return .alreadyExists }
        if m.contains("no discovery started") { return .noDiscoveryStarted }
        if name.hasSuffix(".Failed") { return .failed }
        return .other
    }
}
