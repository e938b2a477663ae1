import DBus
import Timing

/// The heart-rate block a Polar strap puts in its advertisements (company 0x006B),
/// as it changes: a new measurement about once a second moves the frame counter.
struct PolarAdvert {
    static let companyID: UInt16 = 0x006B
    /// A Polar strap measures once a second. Reports come from a 50 ms scan tick, so a
    /// value is renewed at the first tick at or after its due time, and the next is due a
    /// period after the last was due (not after the tick that renewed it): late ticks on
    /// a busy machine do not stretch the period, and a scanner still hears a new value
    /// about every second.
    static let periodMilliseconds = 1000.0

    var bytes: [UInt8]
    /// 0-7, advanced with each new measurement.
    var counter: UInt8
    /// Bumped whenever `bytes` change, so each device object knows whether it is behind.
    var serial = 0
    /// When the last measurement was due (monotonic ms).
    var updatedAt = -Double.infinity
    /// The stream's notification count at that measurement.
    var notificationMark = -1

    mutating func set(_ new: [UInt8]) {
        guard new != bytes else { return }
        bytes = new
        serial += 1
    }
}

extension SimulatedBlueZ {
    /// Whether a strap's clock follows the wall clock while it is not notifying. Only
    /// a configured class (`advertising`) runs so; otherwise a strap's clock moves only
    /// with its notifications, so the payload sequence depends only on the seed and
    /// the number sent.
    var realTimeClass: Bool { configuration.advertising != nil }

    /// Renews strap `s`'s advertised heart rate when a measurement is due, from the
    /// same stream its notifications come from: read when the pump is moving the stream,
    /// advanced to now otherwise (in a real-time class). An unworn strap advertises no
    /// contact, heart rate 0 and a frozen counter.
    func refreshAdvert(_ s: Int, now: Double) {
        guard var advert = straps[s].advert else { return }
        defer { straps[s].advert = advert }
        guard straps[s].worn else {
            advert.set(DeviceCatalog.polarBlock(contact: false, counter: advert.counter, fast: 0, slow: 0))
            return
        }
        let due = advert.updatedAt + PolarAdvert.periodMilliseconds
        guard now >= due else { return }
        // Notifications move the stream while they keep coming (the last within 1.5
        // notification periods, at least 1.5 s); the advertisement then only reads it.
        let pumped = straps[s].clockByPump && now - (straps[s].clockAt ?? -.infinity) < 1500 * max(1, 1 / rate)
        if pumped {
            guard straps[s].stream.notificationCount != advert.notificationMark else { return }
        } else if realTimeClass {
            let elapsed = straps[s].clockAt.map { max(0, (now - $0) / 1000) } ?? 1
            _ = straps[s].stream.next(interval: elapsed)
            straps[s].clockAt = now
            straps[s].clockByPump = false
        } else {
            return
        }
        // More than a period late (a stalled machine): start again from now, no burst.
        advert.updatedAt = now - due < PolarAdvert.periodMilliseconds ? due : now
        advert.notificationMark = straps[s].stream.notificationCount
        let stream = straps[s].stream
        guard stream.contact else {
            advert.set(DeviceCatalog.polarBlock(contact: false, counter: advert.counter, fast: 0, slow: 0))
            return
        }
        advert.counter = (advert.counter + 1) & 0x07
        let slow = UInt8(clamping: stream.lastHeartRate)
        let fast = stream.recentBeats.last.map { UInt8(clamping: Int((60_000 / $0.rrMilliseconds).rounded())) } ?? slow
        advert.set(DeviceCatalog.polarBlock(contact: true, counter: advert.counter, fast: fast, slow: slow))
        payloadLog.appendAdvert(AdvertRecord(
            address: straps[s].identity.address, counter: Int(advert.counter), heartRate: Int(slow), fastHeartRate: Int(fast),
            bytes: advert.bytes, monotonicMilliseconds: now, wallMilliseconds: WallClock.milliseconds(),
            dueMilliseconds: advert.updatedAt))
    }

    /// `ManufacturerData` (a{qv}) as the strap advertises it now; nil when it has none.
    func manufacturerValue(_ s: Int) -> DBusValue? {
        let data = straps[s].manufacturerData
        guard !data.isEmpty else { return nil }
        return .dictionary(key: "q", value: "v",
                           data.sorted { $0.key < $1.key }.map { DBusDictEntry(.uint16($0.key), .variant(.bytes($0.value))) })
    }

    /// Puts the selected straps on (true) or on a hook (false). Returns how many.
    @discardableResult
    public func setWorn(_ selector: String, worn: Bool) -> Int {
        let chosen = strapIndices(selector)
        let now = MonotonicClock.seconds() * 1000
        for s in chosen where straps[s].worn != worn {
            straps[s].worn = worn
            if worn {
                // The strap's clock resumes where it stopped.
                straps[s].clockAt = now
                straps[s].clockByPump = false
                straps[s].advert?.updatedAt = -.infinity
            }
        }
        return chosen.count
    }
}
