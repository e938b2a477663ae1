// SPDX-License-Identifier: MIT

/// Decides when an adapter has stalled and how to recover it.
///
/// Controllers hang in two ways gateways meet in the field: the scan goes silent
/// (discovery "on", yet not one advertisement from a room full of phones and straps),
/// or every connection attempt aborts. Both are judged only while there is work the
/// adapter fails at (straps waiting, none streaming through it), so a quiet room after
/// closing time never power-cycles anything. The ladder: power-cycle through BlueZ
/// first; if that did not help, an HCI reset when the process may do one; then the
/// power-cycle again. A cool-down keeps recoveries from following each other.
public struct AdapterHealth: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Seconds of scanning without a single advertisement before the scan is stalled.
        public var silentScanAfter: Double
        /// Connection aborts/timeouts within `abortWindow`, with no success, that make a stall.
        public var abortBurst: Int
        public var abortWindow: Double
        /// Minimum seconds between two recoveries of one adapter.
        public var cooldown: Double

        public init(silentScanAfter: Double = 120, abortBurst: Int = 6, abortWindow: Double = 180, cooldown: Double = 180) {
            self.silentScanAfter = silentScanAfter
            self.abortBurst = abortBurst
            self.abortWindow = abortWindow
            self.cooldown = cooldown
        }
    }

    public enum Action: String, Sendable, Hashable {
        /// Adapter1.Powered false, then true.
        case powerCycle = "power-cycle"
        /// HCI device reset through ioctls (needs CAP_NET_ADMIN).
        case hciReset = "hci-reset"
    }

    public enum Cause: String, Sendable, Hashable {
        case silentScan = "no advertisements while scanning"
        case connectAborts = "repeated connection aborts"
    }

    public var settings: Settings
    public private(set) var powerCycles = 0
    public private(set) var hciResets = 0
    private var scanningSince: Double?
    private var lastAdvertisement: Double?
    private var aborts: [Double] = []
    private var lastRecovery: Double?
    /// Recoveries since the adapter last showed it works (an advertisement or a link).
    private var unsuccessfulRecoveries = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    public var recoveries: Int { powerCycles + hciResets }

    public mutating func scanning(_ on: Bool, at now: Double) {
        if on {
            if scanningSince == nil { scanningSince = now }
        } else {
            scanningSince = nil
        }
    }

    public mutating func advertisement(at now: Double) {
        lastAdvertisement = now
        unsuccessfulRecoveries = 0
    }

    public mutating func connectFailed(_ kind: ConnectFailureKind, at now: Double) {
        guard kind == .abortByLocal || kind == .timeout else { return }
        aborts.append(now)
        aborts.removeAll { now - $0 > settings.abortWindow }
    }

    public mutating func connected(at now: Double) {
        aborts.removeAll()
        unsuccessfulRecoveries = 0
    }

    /// What to do now, if anything. `waiting`: links that want this adapter and are not
    /// streaming; `streaming`: links streaming through it.
    public mutating func evaluate(now: Double, waiting: Int, streaming: Int, canReset: Bool) -> (Action, Cause)? {
        if let last = lastRecovery, now - last < settings.cooldown { return nil }
        guard waiting > 0, streaming == 0 else { return nil }
        var cause: Cause?
        if let since = scanningSince {
            let heard = max(lastAdvertisement ?? since, since)
            if now - heard >= settings.silentScanAfter { cause = .silentScan }
        }
        if cause == nil, aborts.filter({ now - $0 <= settings.abortWindow }).count >= settings.abortBurst {
            cause = .connectAborts
        }
        guard let cause else { return nil }
        let action: Action = (unsuccessfulRecoveries % 2 == 1 && canReset) ? .hciReset : .powerCycle
        switch action {
        case .powerCycle: powerCycles += 1
        case .hciReset: hciResets += 1
        }
        unsuccessfulRecoveries += 1
        lastRecovery = now
        aborts.removeAll()
        // The silent-scan clock starts again with the recovered adapter.
        if scanningSince != nil { scanningSince = now }
        return (action, cause)
    }
}
