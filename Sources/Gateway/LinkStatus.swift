// SPDX-License-Identifier: MIT

/// Where a link is in its life, as `status` shows it.
public enum LinkState: String, Sendable, Hashable {
    case waiting
    case connecting
    case resolving
    case streaming
    case backingOff = "backing-off"
    case stopped
}

/// One followed device, as seen by the connection manager.
public struct LinkStatus: Sendable, Hashable {
    public var address: String
    public var name: String?
    public var adapter: String?
    public var state: LinkState = .waiting
    public var notify: NotifyMethod?
    /// Successful connections; reconnects = connects - 1.
    public var connects = 0
    public var connectFailures = 0
    public var flapping = false
    public var lastError: String?
    public var rssi: Int16?
    public var counters = NotificationCounters()

    public var reconnects: Int { max(0, connects - 1) }
}
