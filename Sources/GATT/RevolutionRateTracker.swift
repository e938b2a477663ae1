// SPDX-License-Identifier: MIT

/// Turns cumulative revolution counters and event times (CSC, CPS) into a rate,
/// rollover-safe.
///
/// All deltas use masking or wrapping arithmetic: the event time wraps every 64 s
/// (32 s for CPS wheel ticks) and the crank counter at 65536, so plain subtraction on
/// unsigned values would trap. Nordic's `65535 + new − old` is off by one tick; this
/// uses the full modulus.
public struct RevolutionRateTracker: Sendable {
    public enum Kind: Sendable {
        /// uint16 counter, 1/1024 s ticks: result in revolutions per minute.
        case crank
        /// uint32 counter, 1/1024 s (CSC) or 1/2048 s (CPS) ticks: result in m/s.
        case wheel(circumferenceMeters: Double, ticksPerSecond: Double)
    }

    public struct Sample: Sendable, Equatable {
        /// rpm (crank) or m/s (wheel)
        public var rate: Double
        /// Revolutions since the previous packet (signed for wheel counters: a client
        /// "Set Cumulative Value" may move them backwards).
        public var deltaRevolutions: Int
        /// Distance covered since the previous packet (wheel only).
        public var deltaDistanceMeters: Double?
    }

    public let kind: Kind
    /// Packets without a new event that keep the last rate before it is reported as 0
    /// (GoldenCheetah uses 2, allowing cadences below 60 rpm at 1 Hz notifications).
    public var stalePacketsAllowed: Int
    /// Rates above this are dropped as glitches (250 rpm, 30 m/s).
    public var maximumRate: Double

    private var previous: (revolutions: UInt32, time: UInt16, receivedAt: Double?)?
    private var lastRate: Double = 0
    private var stalePackets = 0

    public init(kind: Kind, stalePacketsAllowed: Int = 2, maximumRate: Double? = nil) {
        self.kind = kind
        self.stalePacketsAllowed = stalePacketsAllowed
        switch kind {
        case .crank: self.maximumRate = maximumRate ?? 250
        case .wheel: self.maximumRate = maximumRate ?? 30
        }
    }

    public static func cscWheel(circumferenceMeters: Double = 2.340) -> RevolutionRateTracker {
        RevolutionRateTracker(kind: .wheel(circumferenceMeters: circumferenceMeters, ticksPerSecond: 1024))
    }

    public static func cpsWheel(circumferenceMeters: Double = 2.340) -> RevolutionRateTracker {
        RevolutionRateTracker(kind: .wheel(circumferenceMeters: circumferenceMeters, ticksPerSecond: 2048))
    }

    public static func crank() -> RevolutionRateTracker { RevolutionRateTracker(kind: .crank) }

    private var rolloverSeconds: Double {
        switch kind {
        case .crank: 64
        case let .wheel(_, ticksPerSecond): 65536 / ticksPerSecond
        }
    }

    /// Forget the previous packet (disconnect, or the sensor was reset).
    public mutating func reset() {
        previous = nil
        lastRate = 0
        stalePackets = 0
    }

    /// Feeds one packet's counter and event time. `receivedAt` (seconds, any epoch) lets
    /// the tracker re-initialise when packets are further apart than one event-time
    /// rollover period, where the delta would be ambiguous. Returns nil for the first
    /// packet, after a re-initialisation, and for glitches above `maximumRate`.
    public mutating func update(revolutions: UInt32, eventTime: UInt16, receivedAt: Double? = nil) -> Sample? {
        defer { previous = (revolutions, eventTime, receivedAt) }
        guard let prev = previous else { return nil }
        if let now = receivedAt, let then = prev.receivedAt, now - then >= rolloverSeconds || now < then {
            lastRate = 0
            stalePackets = 0
            return nil
        }
        let dT = Int(eventTime &- prev.time)      // UInt16 wrap = modulo 65536
        let dRev: Int
        switch kind {
        case .crank: dRev = Int(UInt16(truncatingIfNeeded: revolutions) &- UInt16(truncatingIfNeeded: prev.revolutions))
        case .wheel: dRev = Int(Int32(bitPattern: revolutions &- prev.revolutions))
        }
        if dT == 0 {
            // No new event: keep the last rate for a while, then report a stop.
            stalePackets += 1
            if stalePackets > stalePacketsAllowed { lastRate = 0 }
            return Sample(rate: lastRate, deltaRevolutions: 0, deltaDistanceMeters: 0)
        }
        stalePackets = 0
        let rate: Double
        var distance: Double?
        switch kind {
        case .crank:
            rate = Double(dRev) * 60 * 1024 / Double(dT)
        case let .wheel(circumference, ticksPerSecond):
            rate = Double(dRev) * circumference * ticksPerSecond / Double(dT)
            distance = Double(dRev) * circumference
        }
        guard rate >= 0, rate <= maximumRate else { return nil }
        lastRate = rate
        return Sample(rate: rate, deltaRevolutions: dRev, deltaDistanceMeters: distance)
    }
}
