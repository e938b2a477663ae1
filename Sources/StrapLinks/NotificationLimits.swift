// SPDX-License-Identifier: MIT

/// What one device's heart-rate notifications may cost the gateway, whatever it sends: a
/// neighbour's broken strap or a hostile device must not grow memory or the cache.
public struct NotificationLimits: Sendable, Equatable {
    /// Longer values are dropped before decoding. 512 bytes is the longest attribute value
    /// BLE allows (Core 5.x, Vol 3 Part F 3.2.9); a longer one is not a GATT notification.
    public var maxValueBytes = 512
    /// RR intervals kept per record, the newest. A heart at 300 bpm beats 5 times a second,
    /// and straps notify about once a second; more than this is a device making them up.
    public var maxRRPerRecord = 16
    /// Heart-rate notifications per second a device may send on average (a token bucket
    /// of `burst`); faster ones are dropped and counted, and the device is flagged. A heart
    /// beats at most about 5 times a second, and straps notify once a second or per beat.
    /// nil: no limit (`blegate stream` measuring a simulator at thousands a second).
    public var maxRate: Double? = 5
    /// Values a strap sent at its own pace can arrive together: bluetoothd or the
    /// controller held them while the machine stalled (on the real bluetoothd in the
    /// realbluez VM, stalls of tens of seconds cut 10 to 42 values a strap out of 240 with a
    /// burst of 10). The bucket holds up to 2 minutes of a once-a-second strap after a
    /// silence; a device sending faster than `maxRate` for longer is still cut to it.
    public var burst = 120.0
    /// While a device keeps exceeding a limit, how often the journal hears of it again.
    public var reportEvery = 60.0

    public init() {}

    /// Everything accepted, as a stream measuring raw throughput wants.
    public static var unlimitedRate: NotificationLimits {
        var l = NotificationLimits()
        l.maxRate = nil
        return l
    }
}

/// A per-device token bucket: `rate` a second on average, bursts of `burst`.
struct RateBucket {
    var tokens: Double
    var updatedAt: Double

    init(burst: Double, now: Double) {
        tokens = burst
        updatedAt = now
    }

    /// Takes a token if there is one.
    mutating func take(rate: Double, burst: Double, now: Double) -> Bool {
        tokens = min(burst, tokens + max(0, now - updatedAt) * rate)
        updatedAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
