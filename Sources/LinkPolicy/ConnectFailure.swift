// SPDX-License-Identifier: MIT

/// What kind of failure a Connect (or a step right after it) was. Each kind earns its own
/// retry pace: an abort by the local controller is the everyday noise of BLE and is
/// retried soon, a timeout means the strap is probably out of range, and "in progress"
/// is our own earlier attempt still running.
public enum ConnectFailureKind: String, Sendable, Hashable, CaseIterable {
    /// `le-connection-abort-by-local`: the controller gave up (often a strap that stopped
    /// answering in the middle of the handshake) or refused a link it has no room for.
    case abortByLocal = "abort-by-local"
    /// `InProgress`, or 5.66's `Failed "Operation already in progress"`.
    case inProgress = "in-progress"
    /// No reply in time (D-Bus NoReply/Timeout, or our own deadline), or a page timeout.
    case timeout
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

    public init(_ error: BlueZErrorKind) {
        switch error {
        case .inProgress: self = .inProgress
        case .abortByLocal, .notConnected: self = .abortByLocal
        case .timeout: self = .timeout
        case .notReady, .rfkillBlocked: self = .notReady
        case .doesNotExist, .noBluetoothd: self = .deviceGone
        case .failed: self = .failed
        case .notifyAcquired, .notSupported, .notPermitted, .noDiscoveryStarted, .alreadyExists, .other: self = .other
        }
    }

    /// Sorts a D-Bus error (name and message, as BlueZ sends them) into a kind.
    public static func classify(errorName: String, message: String) -> ConnectFailureKind {
        ConnectFailureKind(BlueZErrorKind.classify(name: errorName, message: message))
    }

    /// Failures that a controller without room for another link produces.
    public var couldBeCapacity: Bool { self == .abortByLocal || self == .timeout }
}
