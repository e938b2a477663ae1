// SPDX-License-Identifier: MIT

/// Where a link is in its life, as `status` shows it.
public enum LinkState: String, Sendable, Hashable, CaseIterable {
    case waiting
    /// Seen and selected, waiting for room on an adapter (or linkable only by advertisement).
    case waitingForLink = "waiting-for-link"
    /// No link; heart rate comes from its advertisements.
    case advertised
    /// No adapter hears it now.
    case notSeen = "not-seen"
    /// Seen, but the configuration's deny list (or allow list) leaves it out.
    case denied
    case connecting
    case resolving
    case streaming
    case backingOff = "backing-off"
    /// A scale no one stands on: it advertises, and is linked, only while it weighs someone.
    case idle
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
    /// Why it is in this state, for people ("waiting for a link: hci0 4/4 in use").
    public var reason: String?
    /// Monotonic seconds until which it backs off.
    public var backingOffUntil: Double?
    public var rssi: Int16?
    public var counters = NotificationCounters()

    public var reconnects: Int { max(0, connects - 1) }
}

/// One adapter's links, as `status` shows them.
public struct AdapterLinks: Sendable, Hashable {
    public var adapter: String
    public var held: Int
    public var connecting: Int
    /// Links allowed now: learned from refusals, or the maximum while never refused.
    public var limit: Int
    public var learned: Int?
    /// The configured `max_links`.
    public var maximum: Int
    /// One link above the learned limit is being tried.
    public var probing: Bool
    /// Device objects bluetoothd has under the adapter: every device it heard, strap or not.
    public var devices = 0
}
