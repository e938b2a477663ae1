// SPDX-License-Identifier: MIT

/// Everything the straps sent since the gateway started, summed over devices: what
/// `blegate status` shows as `totals` and Prometheus counts. Per-device counts stay in
/// `NotificationCounters`; these only grow while the manager lives.
public struct LinkTotals: Sendable, Equatable {
    public var heartRateNotifications = 0
    public var batteryNotifications = 0
    /// Advertisements that made a record (a Polar strap's heart rate without a link).
    public var advertisements = 0
    /// Payloads that did not decode, and values longer than BLE allows: counted, skipped.
    public var undecodable = 0
    public var oversized = 0
    /// Heart-rate notifications dropped for coming faster than a heart beats.
    public var tooFast = 0
    /// Links lost and made again.
    public var reconnects = 0

    public init() {}

    /// Adds another manager's totals (the gateway carries them across bus reconnections).
    public static func + (a: LinkTotals, b: LinkTotals) -> LinkTotals {
        var t = a
        t.heartRateNotifications += b.heartRateNotifications
        t.batteryNotifications += b.batteryNotifications
        t.advertisements += b.advertisements
        t.undecodable += b.undecodable
        t.oversized += b.oversized
        t.tooFast += b.tooFast
        t.reconnects += b.reconnects
        return t
    }
}
