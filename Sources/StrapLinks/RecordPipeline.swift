// SPDX-License-Identifier: MIT
import BlueZ
import GATT
import HRV
import Normalization
import Synchronization
import WearMetrics
import Timing

/// Counters of one device's notifications, as shown by `stream` and `status`.
public struct NotificationCounters: Sendable, Hashable {
    public var heartRate = 0
    public var malformed = 0
    public var battery = 0
    public var hrvReports = 0
    public var lastHeartRate: UInt16?
    public var lastBattery: UInt8?
    /// Records made from advertised heart rate (no link).
    public var advertised = 0
    /// Monotonic seconds of the last advertised record and of the last linked heart rate.
    public var lastAdvertisedAt: Double?
    public var lastLinkedAt: Double?
    /// Values longer than BLE allows, dropped before decoding.
    public var oversized = 0
    /// Heart-rate notifications dropped for coming faster than any heart beats.
    public var tooFast = 0
    /// RR intervals dropped from records that carried more than a record may.
    public var rrDropped = 0
    /// Why the device is flagged (too fast, oversized values), while it lasts.
    public var flag: String?
}

/// Decoding, normalization and HRV for every device, between the notification readers
/// and the record sink.
///
/// One lock guards all devices: the two threads that feed it (AcquireNotify reader and
/// D-Bus dispatcher) rarely contend, and one lock keeps each device's records in order
/// through to the sink, which is called under it.
final class RecordPipeline: Sendable {
    struct Device {
        var meta = DeviceMeta()
        var counters = NotificationCounters()
        /// The last new advertisement frames (counter, heart rate), the newest last; nil
        /// before the first frame heard.
        var advertFrames: [AdvertFrame]?
        /// Paced in wall-clock seconds of arrival (`heartRate`'s `arrival`).
        var bucket: RateBucket?
        /// Monotonic seconds of the last journal line about this device's excess, and the
        /// counts it reported.
        var reportedAt: Double?
        var reportedDrops = 0
    }

    /// While a link delivered heart rate this recently, advertisements add nothing.
    static let linkPrecedence = 3.0

    struct State {
        var hrv: HRVEngine
        var normalizer = WearMetricsNormalizer()
        var devices: [String: Device] = [:]
        /// Records of the reader round under way, handed over together when it ends.
        var held: [SinkRecord] = []
    }

    let sink: any RecordSink
    let limits: NotificationLimits
    private let state: Mutex<State>
    private let emit: @Sendable (LinkEvent) -> Void

    init(sink: any RecordSink, hrv: HRVEngineConfiguration, limits: NotificationLimits = NotificationLimits(),
         emit: @escaping @Sendable (LinkEvent) -> Void = { _ in }) {
        self.sink = sink
        self.limits = limits
        self.emit = emit
        self.state = Mutex(State(hrv: HRVEngine(configuration: hrv)))
    }

    /// One Heart Rate Measurement. A payload that does not decode is counted and
    /// skipped: it never reaches the sink and never stops the stream. Values longer than
    /// BLE allows and notifications faster than a heart beats are dropped before decoding,
    /// counted, and flag the device; a record keeps at most `maxRRPerRecord` RR intervals.
    ///
    /// `arrival`: when the notification reached this machine (the kernel's stamp on an
    /// AcquireNotify datagram, or when the dispatcher read a StartNotify signal off the
    /// bus); the record carries it, so a record handed over late (the reader gathers
    /// datagrams while traffic is dense; a busy bus queues signals) still has its own
    /// time. Without it, the time of the call.
    ///
    /// `hold`: the caller is the AcquireNotify reader, which calls `releaseHeld()` when its
    /// round ends; the records wait for that and go to the sink with the rest of the round.
    ///
    /// The rate limit is paced by `arrival`, not by when the call comes: the AcquireNotify
    /// reader hands a strap's datagrams over a round at a time (a gathering window, or
    /// longer when its thread is held up), and with their kernel stamps they count at the
    /// pace they came, not as a burst the strap never sent. A StartNotify value's arrival
    /// is when the dispatcher read it, so signals it reads late still come as one burst.
    func heartRate(deviceID: String, bytes: UnsafeRawBufferPointer, arrival: UTCTimestamp? = nil, hold: Bool = false) {
        let now = MonotonicClock.seconds()
        let time = arrival ?? UTCTimestamp.now
        let limits = self.limits
        if bytes.count > limits.maxValueBytes {
            excess(deviceID, now: now) { $0.oversized += 1 }
            return
        }
        if let rate = limits.maxRate {
            let sent = time.secondsSince1970
            let admitted = state.withLock { s in
                s.devices[deviceID, default: Device()].withBucket(burst: limits.burst, now: sent) { $0.take(rate: rate, burst: limits.burst, now: sent) }
            }
            if !admitted {
                excess(deviceID, now: now) { $0.tooFast += 1 }
                return
            }
        }
        var measurement: HeartRateMeasurement
        do {
            measurement = try HeartRateMeasurement(bytes: bytes)
        } catch {
            state.withLock { $0.devices[deviceID, default: Device()].counters.malformed += 1 }
            return
        }
        let extraRR = measurement.rrIntervalTicks.count - limits.maxRRPerRecord
        if extraRR > 0 { measurement.rrIntervalTicks.removeFirst(extraRR) }
        state.withLock { s in
            let record = s.devices[deviceID, default: Device()].withRecord { device in
                if extraRR > 0 { device.counters.rrDropped += extraRR }
                device.counters.heartRate += 1
                device.counters.lastHeartRate = measurement.heartRate
                device.counters.lastLinkedAt = now
                return WearMetricsNormalizer.record(heartRate: measurement, deviceID: deviceID, at: time, deviceMeta: device.meta)
            }
            hand(record, .heartRate, hold: hold, &s)
            if let rr = record.rrIntervals, !rr.isEmpty,
               let report = s.hrv.ingest(deviceID: deviceID, rrMilliseconds: rr, receivedAt: time.secondsSince1970),
               let hrv = s.normalizer.record(hrv: report) {
                s.devices[deviceID]?.counters.hrvReports += 1
                hand(hrv, .hrv, hold: hold, &s)
            }
        }
    }

    private func hand(_ record: WearMetrics, _ kind: RecordKind, hold: Bool, _ s: inout State) {
        if hold {
            s.held.append(SinkRecord(record, kind: kind))
        } else {
            sink.receive(record, kind: kind)
        }
    }

    /// Hands the records held in the reader's round to the sink, in one call. The reader
    /// calls it as each round ends (before it lets the next datagrams gather), so a held
    /// record waits only for the rest of its round.
    func releaseHeld() {
        state.withLock { s in
            guard !s.held.isEmpty else { return }
            sink.receive(s.held)
            s.held.removeAll(keepingCapacity: true)
        }
    }

    /// Heart rate heard in a Polar strap's advertisement. A record only for a new frame
    /// (not one of the last `recentFrames`: a strap on a hook repeats its last frame, and
    /// adapters hear one frame each and in their own order), when the strap reports skin
    /// contact and a rate, and
    /// no link delivered heart rate in the last `linkPrecedence` seconds (one stream of
    /// records per strap). No RR, so no HRV.
    /// `arrival`: when the advertisement's signal was read off the bus (nil: now).
    func advertisement(deviceID: String, _ hr: PolarHeartRate, arrival: UTCTimestamp? = nil) {
        let time = arrival ?? UTCTimestamp.now
        let now = MonotonicClock.seconds()
        state.withLock { s in
            var device = s.devices[deviceID, default: Device()]
            defer { s.devices[deviceID] = device }
            // The first frame heard could be one a strap on a hook repeats for hours: only
            // a frame that moved is a measurement.
            let frame = AdvertFrame(counter: hr.frameCounter, heartRate: hr.heartRate)
            guard var recent = device.advertFrames else { device.advertFrames = [frame]; return }
            guard !recent.contains(frame) else { return }
            recent.append(frame)
            device.advertFrames = Array(recent.suffix(Self.recentFrames))
            guard hr.heartRate > 0, hr.sensorContact else { return }
            if let linked = device.counters.lastLinkedAt, now - linked < Self.linkPrecedence { return }
            device.counters.advertised += 1
            device.counters.lastHeartRate = UInt16(hr.heartRate)
            device.counters.lastAdvertisedAt = now
            sink.receive(WearMetricsNormalizer.record(advertisedHeartRate: Double(hr.heartRate), deviceID: deviceID, at: time,
                                                      deviceMeta: device.meta), kind: .heartRate)
        }
    }

    /// A Polar frame as far as telling one from another goes: its counter (3 bits, moving
    /// once a second) and heart rate.
    struct AdvertFrame: Equatable {
        var counter: UInt8
        var heartRate: UInt8
    }

    /// How many new frames a strap's next one is compared with. Adapters signal each frame
    /// once each, in their own order, and a stalled machine hands them over in bursts: a
    /// frame equal to one of the last four is one of those again (or a strap on a hook
    /// repeating its last); any other is new, also the same counter eight frames later
    /// with another rate.
    static let recentFrames = 4

    /// Battery Level from a 0x2A19 notification or read, or Battery1.Percentage.
    func battery(deviceID: String, percent: UInt8) {
        let time = UTCTimestamp.now
        state.withLock { s in
            var device = s.devices[deviceID, default: Device()]
            let changed = device.counters.lastBattery != percent
            device.counters.battery += 1
            device.counters.lastBattery = percent
            device.meta.absorb(.batteryLevel(BatteryLevel(percent: percent)))
            s.devices[deviceID] = device
            guard changed else { return }
            var meta = DeviceMeta()
            meta.absorb(.batteryLevel(BatteryLevel(percent: percent)))
            sink.receive(WearMetrics(timestamp: time, deviceID: deviceID, source: "ble_device", meta: meta.entries), kind: .device)
        }
    }

    /// Device Information strings and Body Sensor Location, read once per connection:
    /// they join every later record's meta, and go out once as a device record.
    func deviceInformation(deviceID: String, _ decoded: [DecodedCharacteristic]) {
        guard !decoded.isEmpty else { return }
        let time = UTCTimestamp.now
        state.withLock { s in
            var meta = DeviceMeta()
            for d in decoded {
                meta.absorb(d)
                s.devices[deviceID, default: Device()].meta.absorb(d)
            }
            sink.receive(WearMetrics(timestamp: time, deviceID: deviceID, source: "ble_device", meta: meta.entries), kind: .device)
        }
    }

    /// The link dropped: HRV must not form differences across the hole.
    func disconnected(deviceID: String) {
        state.withLock { $0.hrv.disconnected(deviceID: deviceID) }
    }

    /// When `tick` next has something to do (seconds since the Unix epoch): a strap that
    /// stopped feeding RR has a report due, or is to be forgotten. Straps that keep
    /// notifying emit their reports as they notify.
    var nextTick: Double? {
        state.withLock { s in s.hrv.nextTick(quietAfter: s.hrv.configuration.emitEvery) }
    }

    /// Keeps HRV windows sliding for straps that went quiet.
    func tick() {
        let now = WallClock.seconds()
        state.withLock { s in
            for report in s.hrv.tick(now: now) {
                guard let record = s.normalizer.record(hrv: report) else { continue }
                s.devices[report.deviceID]?.counters.hrvReports += 1
                sink.receive(record, kind: .hrv)
            }
        }
    }

    /// Counts a dropped notification, flags the device, and tells the journal at once and
    /// then every `reportEvery` seconds while it lasts (one line, not one per drop).
    private func excess(_ deviceID: String, now: Double, count: (inout NotificationCounters) -> Void) {
        let event: LinkEvent? = state.withLock { s in
            var device = s.devices[deviceID, default: Device()]
            defer { s.devices[deviceID] = device }
            count(&device.counters)
            let c = device.counters
            let drops = c.tooFast + c.oversized
            var why: [String] = []
            if c.tooFast > 0 { why.append("notifies faster than a heart beats") }
            if c.oversized > 0 { why.append("sends values longer than BLE allows") }
            device.counters.flag = why.joined(separator: ", ")
            if let last = device.reportedAt, now - last < limits.reportEvery { return nil }
            let since = device.reportedAt.map { now - $0 }
            device.reportedAt = now
            defer { device.reportedDrops = drops }
            return .notificationsDropped(address: deviceID, reason: device.counters.flag ?? "",
                                         tooFast: c.tooFast, oversized: c.oversized,
                                         newDrops: drops - device.reportedDrops, overSeconds: since)
        }
        if let event { emit(event) }
    }

    func counters(deviceID: String) -> NotificationCounters {
        state.withLock { $0.devices[deviceID]?.counters ?? NotificationCounters() }
    }

    var allCounters: [String: NotificationCounters] {
        state.withLock { $0.devices.mapValues(\.counters) }
    }

    /// The devices' counters summed (the pipeline forgets no device while it lives).
    var totals: LinkTotals {
        state.withLock { s in
            var t = LinkTotals()
            for d in s.devices.values {
                t.heartRateNotifications += d.counters.heartRate
                t.batteryNotifications += d.counters.battery
                t.advertisements += d.counters.advertised
                t.undecodable += d.counters.malformed
                t.oversized += d.counters.oversized
                t.tooFast += d.counters.tooFast
            }
            return t
        }
    }
}

extension RecordPipeline.Device {
    /// In-place access through the dictionary (no copy of the meta per notification).
    mutating func withRecord(_ body: (inout Self) -> WearMetrics) -> WearMetrics { body(&self) }

    mutating func withBucket(burst: Double, now: Double, _ body: (inout RateBucket) -> Bool) -> Bool {
        var b = bucket ?? RateBucket(burst: burst, now: now)
        defer { bucket = b }
        return body(&b)
    }
}
