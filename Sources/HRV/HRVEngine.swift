// SPDX-License-Identifier: MIT

/// Rolling per-device HRV with scheduled emission.
///
/// No clock or timer inside: every call passes the time, so the engine is deterministic
/// and a replay of a recording reproduces the same reports. The gateway calls `ingest`
/// for every 0x2A37 notification with RR values, `disconnected` on disconnect, and
/// `tick` from its own timer so windows keep sliding when a strap goes silent.
public struct HRVEngine: Sendable {
    public var configuration: HRVEngineConfiguration

    private struct Device: Sendable {
        var stream: RRStream
        var nextEmission: Double
        /// When `ingest` last fed it (seconds since the Unix epoch).
        var lastIngest: Double
        var context: HRVContext = .unknown
    }

    private var devices: [String: Device] = [:]

    public init(configuration: HRVEngineConfiguration = HRVEngineConfiguration()) {
        self.configuration = configuration
    }

    public var deviceIDs: [String] { devices.keys.sorted() }

    /// Feeds the RR values (ms, oldest first) of one notification. Returns a report when
    /// this device's emission is due at `receivedAt` (seconds since the Unix epoch).
    public mutating func ingest<C: Collection<Double>>(deviceID: String, rrMilliseconds: C, receivedAt: Double) -> HRVReport? {
        let c = configuration
        let retention = max(c.rmssdWindow, c.sdnnWindow) + 5
        let due: Bool = {
            // One in-place access through the dictionary: no copy of the beat buffers.
            func feed(_ d: inout Device) -> Bool {
                d.stream.append(rrMilliseconds, receivedAt: receivedAt,
                                jitterAllowance: c.gapJitterAllowance, driftFactor: c.gapDriftFactor)
                d.lastIngest = max(d.lastIngest, receivedAt)
                return receivedAt >= d.nextEmission
            }
            return feed(&devices[deviceID, default: Device(stream: RRStream(rule: c.artifactRule, retention: retention),
                                                           nextEmission: receivedAt + c.emitEvery, lastIngest: receivedAt)])
        }()
        return due ? emitIfDue(deviceID, now: receivedAt) : nil
    }

    /// The link dropped: the next beats start a new segment (no successive difference
    /// across the hole, and the median window restarts).
    public mutating func disconnected(deviceID: String) {
        devices[deviceID]?.stream.breakSegment()
    }

    /// Same as `disconnected`, for any other reason to distrust continuity (sensor
    /// contact lost, a notification known to be lost).
    public mutating func markGap(deviceID: String) { disconnected(deviceID: deviceID) }

    /// Marks exercise (e.g. an FTMS or CPS session is active) or rest.
    public mutating func setContext(_ context: HRVContext, deviceID: String) {
        devices[deviceID]?.context = context
    }

    /// Forget a device entirely.
    public mutating func remove(deviceID: String) { devices[deviceID] = nil }

    /// Emits the reports due at `now` for all devices, in device-ID order. Devices whose
    /// newest beat is older than the longest window are dropped.
    public mutating func tick(now: Double) -> [HRVReport] {
        var reports: [HRVReport] = []
        let longest = max(configuration.rmssdWindow, configuration.sdnnWindow)
        for id in devices.keys.sorted() {
            if let last = devices[id]?.stream.lastBeatTimeOrClassified, now - last > longest {
                devices[id] = nil
                continue
            }
            if let r = emitIfDue(id, now: now) { reports.append(r) }
        }
        return reports
    }

    /// The earliest time at which `tick` has something to do for a device that went
    /// quiet: a report due for one that has not been fed for `quietAfter` seconds, or a
    /// device to forget. Nil when no device is followed.
    ///
    /// A device that keeps being fed gets its reports from `ingest`, so a caller that
    /// sleeps until this time (rather than ticking every second) wakes about once per
    /// `quietAfter` while every strap streams, and the first report of a strap that fell
    /// silent comes at most `quietAfter` late.
    public func nextTick(quietAfter: Double) -> Double? {
        let longest = max(configuration.rmssdWindow, configuration.sdnnWindow)
        var earliest: Double?
        for d in devices.values {
            var due = max(d.nextEmission, d.lastIngest + quietAfter)
            if let last = d.stream.lastBeatTimeOrClassified { due = min(due, last + longest) }
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }

    /// End time of the newest beat of `deviceID` on the engine's time line.
    public func lastBeatTime(deviceID: String) -> Double? { devices[deviceID]?.stream.lastBeatTimeOrClassified }

    /// A report for `deviceID` with windows ending at `now`, outside the schedule.
    public func report(deviceID: String, at now: Double) -> HRVReport? {
        guard let d = devices[deviceID] else { return nil }
        return makeReport(deviceID, d, now: now)
    }

    private mutating func emitIfDue(_ id: String, now: Double) -> HRVReport? {
        guard let d = devices[id], now >= d.nextEmission else { return nil }
        let every = configuration.emitEvery
        var next = d.nextEmission + every
        if next <= now { next = now + every }   // after a long silence, do not burst
        devices[id]!.nextEmission = next
        return makeReport(id, d, now: now)
    }

    private func makeReport(_ id: String, _ d: Device, now: Double) -> HRVReport? {
        let c = configuration
        let short = d.stream.window(seconds: c.rmssdWindow, endingAt: now, quality: c.quality, slack: c.gapJitterAllowance)
        let long = d.stream.window(seconds: c.sdnnWindow, endingAt: now, quality: c.quality, slack: c.gapJitterAllowance)
        guard short.beatCount > 0 || long.beatCount > 0 else { return nil }
        return HRVReport(deviceID: id, time: now, short: short, long: long, context: d.context,
                         method: c.artifactRule.methodName)
    }
}

extension RRStream {
    /// Newest beat time, also after a segment break.
    var lastBeatTimeOrClassified: Double? { lastBeatTime ?? classified.last?.time }
}
