// SPDX-License-Identifier: MIT

/// Scanning in bursts once a class is settled: every followed strap streams over its own
/// link and none is followed by its advertisements, so scanning is there only to find a
/// strap that walks in.
///
/// Continuous scanning then costs twice. While discovering, bluetoothd turns every
/// advertisement of every strap in the room (linked straps keep advertising) into a
/// `PropertiesChanged` signal: with 50 straps, about 100 a second, each waking the
/// gateway for nothing. And a controller that scans shares its one radio with the
/// connection events of every link it holds. A burst of `burst` seconds in every
/// `period` still finds a newcomer within one period.
///
/// The pause (`period - burst`) must stay shorter than the shortest time a device that
/// only wakes now and then keeps advertising: a scale stepped on advertises for some
/// ten to thirty seconds and is linked only if heard then. The defaults (3 s in every
/// 10 s, `LinkConfiguration.steadyScan`) hear anything awake for 7 s.
///
/// The cycle starts with a pause (the moment the class settled: scanning has just found
/// everyone), then scans for the last `burst` seconds of each period.
public struct ScanCycle: Sendable, Equatable {
    public var burst: Double
    public var period: Double

    /// nil when `period` does not leave a pause after the burst (scan all the time).
    public init?(burst: Double, period: Double) {
        guard burst > 0, period > burst else { return nil }
        self.burst = burst
        self.period = period
    }

    /// Whether to scan `elapsed` seconds after the cycle started.
    public func scans(elapsed: Double) -> Bool {
        phase(elapsed) >= period - burst
    }

    /// Seconds from `elapsed` until scanning next turns on or off.
    public func untilChange(elapsed: Double) -> Double {
        let p = phase(elapsed), pause = period - burst
        return p < pause ? pause - p : period - p
    }

    private func phase(_ elapsed: Double) -> Double {
        let e = max(elapsed, 0)
        return e - (e / period).rounded(.down) * period
    }
}
