// SPDX-License-Identifier: MIT
import Config
import Gateway
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
        // wake-up, nearly all of its CPU (NotifySocketReader). Records reach the cache's
        // buffer and the wall (which redraws every 250 ms) at most 200 ms later for it.
        notifyGather = .milliseconds(200)
        steadyScan = ScanCycle(burst: c.bluetooth.scanBurst.seconds, period: c.bluetooth.scanEvery.seconds)
        adapterReset = AdapterResetter.make(allowed: c.bluetooth.adapterReset).reset
    }
}
