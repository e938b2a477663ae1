// SPDX-License-Identifier: MIT
import Config
import StrapLinks
import HRV
import LinkPolicy
#if canImport(Glibc)
import Glibc
#endif
import Timing

extension LinkConfiguration {
    /// `[bluetooth]` and `[hrv]` of blegate.toml. The HRV engine keeps two windows: the
    /// shortest configured one for RMSSD, the longest for SDNN (one window: both).
    public init(configuration c: GatewayConfiguration) {
        self.init()
        adapters = c.bluetooth.adapters
        selection = DeviceSelection(mode: c.bluetooth.connect == .auto ? .auto : .list,
                                    allow: c.bluetooth.allow.map(\.description), deny: c.bluetooth.deny.map(\.description))
        notify = c.bluetooth.notify == .acquire ? .acquire : .start
        maxLinks = c.bluetooth.maxLinks
        maxLinksByAdapter = c.bluetooth.maxLinksByAdapter
        priority = c.bluetooth.priority.map(\.description)
        let windows = c.hrv.windows.map(\.seconds)
        hrv = HRVEngineConfiguration(rmssdWindow: windows.min() ?? 60, sdnnWindow: windows.max() ?? 300)
        jitterSeed = UInt64(truncatingIfNeeded: getpid())
        // Straps notify independently: without gathering, each notification costs a
        // wake-up, nearly all of its CPU (NotifySocketReader). The runtime narrows the
        // window while a wall screen watches (`watchedNotifyGather`).
        notifyGather = Self.unwatchedNotifyGather
        steadyScan = ScanCycle(burst: c.bluetooth.scanBurst.seconds, period: c.bluetooth.scanEvery.seconds)
        adapterReset = AdapterResetter.make(allowed: c.bluetooth.adapterReset).reset
    }

    /// While no wall screen watches: records still reach the cache's buffer well within
    /// its commit interval (1 s, counted from each notification's arrival), so
    /// notification → committed is the same, for two reader wake-ups a second instead of five.
    public static let unwatchedNotifyGather = Duration.milliseconds(500)
    /// While a screen keeps the wall live (it redraws every 250 ms).
    public static let watchedNotifyGather = Duration.milliseconds(200)
}
