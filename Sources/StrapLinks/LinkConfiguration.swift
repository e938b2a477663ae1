// SPDX-License-Identifier: MIT
import HRV
import LinkPolicy

/// How GATT notifications are taken from BlueZ.
public enum NotifyMethod: String, Sendable, Hashable, CaseIterable {
    /// `AcquireNotify`: a socket per characteristic, no D-Bus message per value.
    case acquire
    /// `StartNotify`: each value is a PropertiesChanged signal.
    case start
}

/// Everything the connection manager needs to know, filled from the CLI or the config file.
public struct LinkConfiguration: Sendable {
    /// Adapter names (hci0...) to use; empty = every adapter.
    public var adapters: [String] = []
    public var selection = DeviceSelection()
    public var notify = NotifyMethod.acquire
    /// Per-device override of `notify`, keyed by address (upper case) or name pattern.
    public var notifyOverrides: [String: NotifyMethod] = [:]
    /// Upper bound of links per adapter (`max_links`); the real limit is learned below it.
    public var maxLinks = 32
    /// Per-adapter bounds by interface name (hci0) or address, overriding `maxLinks`.
    public var maxLinksByAdapter: [String: Int] = [:]
    /// How limits are learned and probed.
    public var linkLimit = LinkLimit.Settings()
    /// Learned limits across restarts; nil keeps them for this run only.
    public var limitMemory: (any LinkLimitMemory)?
    /// Address or name patterns, most important first: the order links go in after
    /// straps that cannot be heard by advertisement and paired members.
    public var priority: [String] = []
    /// Whether a strap (upper-case address) belongs to a paired member.
    public var isPaired: (@Sendable (String) -> Bool)?
    /// Records from Polar straps' advertised heart rate while they have no link.
    public var advertisedRecords = true
    public var backoff = ReconnectPacing()
    /// A link must last this long to reset the backoff (shorter ones are flaps).
    public var stableAfter: Double = 10
    public var connectTimeout: Duration = .seconds(35)
    /// How long to wait for the GATT objects after Connect.
    public var resolveTimeout: Duration = .seconds(30)
    /// Extra wait after ServicesResolved=true before the cache is declared stale.
    public var resolveGrace: Duration = .seconds(5)
    /// How long AcquireNotify datagrams may gather once traffic is dense (see
    /// `NotifySocketReader.init(gather:)`): fewer wake-ups per notification, at most this
    /// much added delay. Zero hands each datagram over at once.
    public var notifyGather: Duration = .milliseconds(200)
    /// Scanning in bursts once every followed strap streams over its link (`ScanCycle`);
    /// nil scans all the time.
    public var steadyScan = ScanCycle(burst: 3, period: 10)
    /// Battery Level reads when 0x2A19 cannot notify.
    public var batteryReadInterval: Duration = .seconds(300)
    public var hrv = HRVEngineConfiguration()
    /// What one device's notifications may carry and how fast they may come.
    public var notificationLimits = NotificationLimits()
    /// When an adapter counts as stalled, and the pause between recoveries.
    public var health = AdapterHealth.Settings()
    /// Resets an adapter (by name) through HCI, for stalls a power-cycle did not cure.
    /// Nil unless the gateway may (config `adapter_reset`, and CAP_NET_ADMIN held).
    public var adapterReset: (@Sendable (String) async throws -> Void)?
    /// Seed of the backoff jitter (tests pin it).
    public var jitterSeed: UInt64 = 0

    public init() {}

    func maxLinks(adapter name: String, address: String) -> Int {
        maxLinksByAdapter[name] ?? maxLinksByAdapter[address.uppercased()] ?? maxLinks
    }

    func priorityRank(address: String, name: String?) -> Int? {
        priority.firstIndex { DeviceSelection.matches($0, address: address, name: name) }
    }

    func notifyMethod(address: String, name: String?) -> NotifyMethod {
        for (pattern, method) in notifyOverrides where DeviceSelection.matches(pattern, address: address, name: name) {
            return method
        }
        return notify
    }
}
