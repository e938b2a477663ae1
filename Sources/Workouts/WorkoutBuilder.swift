// SPDX-License-Identifier: MIT

import Effort
import HRV
import WearMetrics

/// Turns one strap's records in a class window into a `Workout` (docs/workouts.md,
/// "How a workout is computed"). Pure: the caller reads the records and delivers the
/// result. Linear in records plus seconds, apart from sorting records that arrived out
/// of order (already-sorted input is only checked).
public enum WorkoutBuilder {
    /// A heart rate stands for the seconds after it up to this age; beyond, the strap
    /// is taken as silent and the second counts below zone 1.
    public static let carryMilliseconds: Int64 = 15_000

    /// The workout, or nil when the strap gave no heart rate in the window. `records` are
    /// the strap's own; `machines` the records of the member's machines (treadmill, rower,
    /// bike, foot pod), which add only the distance they covered while the member was
    /// heard (docs/workouts.md, "Distance").
    public static func build(_ request: WorkoutRequest, records: [WearMetrics], machines: [WearMetrics] = []) -> Workout? {
        let lo = request.windowStart.millisecondsSince1970
        let hi = request.windowEnd.millisecondsSince1970
        var inWindow = records.filter { $0.timestamp.millisecondsSince1970 >= lo && $0.timestamp.millisecondsSince1970 < hi }
        if !isSorted(inWindow) { inWindow.sort { $0.timestamp < $1.timestamp } }   // stable: equal stamps keep arrival order

        var heard: [(t: Int64, hr: Double)] = []
        heard.reserveCapacity(inWindow.count)
        for r in inWindow { if let hr = heardHeartRate(r) { heard.append((r.timestamp.millisecondsSince1970, hr)) } }
        guard let first = heard.first, let last = heard.last else { return nil }

        let profile = request.profile ?? MemberProfile()
        let bounds = zoneBounds(profile: profile, defaultMaxHR: request.defaultMaxHR)
        let maxHR = Double(bounds.maxHR)
        let zoneResting = bounds.restingHR.map(Double.init)
        let knowsKcal = profile.weightKg != nil && profile.age != nil && profile.sex != nil

        // Per second: the zone of the last heart rate heard in or before it, if at most
        // `carryMilliseconds` older than the second's start; else index 0.
        let duration = Int((last.t - first.t) / 1000)
        var secondsInZone = [Int](repeating: 0, count: 6)
        var covered = 0
        var kcal = 0.0
        var j = 0
        var current: (hr: Double, t: Int64, zone: Int, kcalPerMinute: Double)?
        for i in 0..<duration {
            let secondStart = first.t + Int64(i) * 1000
            let secondEnd = secondStart + 1000
            var hasHR = false
            while j < heard.count, heard[j].t < secondEnd {
                let (t, hr) = heard[j]
                if t >= secondStart { hasHR = true }
                let zone = HeartRateZone.zone(hr: hr, max: maxHR, resting: zoneResting)
                current = (hr, t, zone, knowsKcal ? EnergyExpenditure.kcalPerMinute(hr: hr, profile: profile) ?? 0 : 0)
                j += 1
            }
            if hasHR { covered += 1 }
            if let c = current, secondStart - c.t <= carryMilliseconds {
                secondsInZone[c.zone] += 1
                kcal += c.kcalPerMinute / 60
            } else {
                secondsInZone[0] += 1
            }
        }

        var sum = 0.0, minHR = Double.infinity, maxSeen = -Double.infinity
        for h in heard {
            sum += h.hr
            minHR = min(minHR, h.hr)
            maxSeen = max(maxSeen, h.hr)
        }
        let average = sum / Double(heard.count)

        // Distance: the strap's own readings and its machines', between the first and the
        // last heart rate heard, in time order.
        var distanceRecords = inWindow.filter { $0.timestamp.millisecondsSince1970 <= last.t && DistanceReading($0) != nil }
        let machineRecords = machines.filter { r in
            let t = r.timestamp.millisecondsSince1970
            return t >= first.t && t <= last.t && DistanceReading(r) != nil
        }
        if !machineRecords.isEmpty {
            distanceRecords += machineRecords
            if !isSorted(distanceRecords) { distanceRecords.sort { $0.timestamp < $1.timestamp } }
        }
        distanceRecords.removeAll { $0.timestamp.millisecondsSince1970 < first.t }
        var points = 0.0
        for (zone, seconds) in secondsInZone.enumerated() { points += EffortPoints.perMinute(zone: zone) * Double(seconds) / 60 }
        let trimp = BanisterTRIMP.value(
            minutes: Double(duration) / 60, averageHR: average,
            restingHR: Double(profile.restingHR ?? BanisterTRIMP.defaultRestingHR), maxHR: maxHR, sex: profile.sex)

        return Workout(
            id: request.id, clientID: request.clientID, gatewayID: request.gatewayID, deviceID: request.deviceID,
            workoutType: request.workoutType, className: request.className,
            startTime: UTCTimestamp(millisecondsSince1970: first.t), endTime: UTCTimestamp(millisecondsSince1970: last.t),
            durationSeconds: duration,
            caloriesActive: knowsKcal ? rounded(kcal, decimals: 1) : nil,
            distanceMeters: distance(distanceRecords).map { rounded($0, decimals: 1) },
            avgHeartRate: rounded(average, decimals: 1),
            maxHeartRate: Int(maxSeen.rounded()), minHeartRate: Int(minHR.rounded()),
            secondsInZone: secondsInZone,
            effortPoints: rounded(points, decimals: 1),
            trimp: rounded(trimp, decimals: 1),
            hrvRMSSDMilliseconds: rmssd(inWindow).map { rounded($0, decimals: 1) },
            coverage: duration > 0 ? rounded(Double(covered) / Double(duration), decimals: 3) : 1,
            formulas: WorkoutFormulas(zones: zoneResting == nil ? WorkoutFormulas.zonesPercentOfMax : WorkoutFormulas.zonesKarvonen),
            sourceDevice: request.sourceDevice,
            samples: samples(inWindow, distance: distanceRecords),
            zoneMaxHR: Int(maxHR), zoneRestingHR: zoneResting.map { Int($0) }
        )
    }

    /// The maximum heart rate zones use (the profile's, Tanaka's from its age, else the
    /// default), and the resting one when Karvonen zones apply.
    public static func zoneBounds(profile: MemberProfile?, defaultMaxHR: Int) -> (maxHR: Int, restingHR: Int?) {
        let maxHR = profile?.maxHR ?? profile?.age.map { Int(MaxHeartRate.tanaka(age: $0).rounded()) } ?? defaultMaxHR
        return (maxHR, profile?.restingHR.flatMap { $0 < maxHR ? $0 : nil })
    }

    /// The heart rate of a record that heard one: `hr` above 0 and skin contact not
    /// reported lost (the normalizer already omits `hr` then; this also covers records
    /// from elsewhere that kept it).
    public static func heardHeartRate(_ r: WearMetrics) -> Double? {
        guard let hr = r.metrics["hr"], hr > 0, r.meta["sensor_contact"] != "not_detected" else { return nil }
        return hr
    }

    static func isSorted(_ records: [WearMetrics]) -> Bool {
        var previous = Int64.min
        for r in records {
            if r.timestamp.millisecondsSince1970 < previous { return false }
            previous = r.timestamp.millisecondsSince1970
        }
        return true
    }

    /// Metres covered over `records` (readings in time order), nil when none carried a
    /// distance.
    static func distance(_ records: [WearMetrics]) -> Double? {
        var counter = DistanceCounter()
        for r in records { counter.add(r) }
        return counter.total
    }

    /// RMSSD of every RR interval in the window, in record order, through the HRV
    /// target's batch analysis (range filter and median20 artifact deletion). RR of a
    /// record that reports no skin contact is skipped. nil without a valid difference.
    static func rmssd(_ records: [WearMetrics]) -> Double? {
        var rr: [Double] = []
        for r in records where r.meta["sensor_contact"] != "not_detected" {
            if let list = r.rrIntervals { rr.append(contentsOf: list) }
        }
        guard rr.count >= 2 else { return nil }
        return HRVAnalysis.analyze(rrMilliseconds: rr).window.timeDomain?.rmssd
    }

    /// Each heard heart rate, with the distance covered so far (readings at or before it)
    /// when the strap or a machine reports one.
    static func samples(_ records: [WearMetrics], distance readings: [WearMetrics]) -> [WorkoutSample] {
        var out: [WorkoutSample] = []
        out.reserveCapacity(records.count)
        var counter = DistanceCounter()
        var j = 0
        for r in records {
            guard let hr = heardHeartRate(r) else { continue }
            while j < readings.count, readings[j].timestamp <= r.timestamp {
                counter.add(readings[j])
                j += 1
            }
            out.append(WorkoutSample(time: r.timestamp, heartRate: Int(hr.rounded()), distanceMeters: counter.total))
        }
        return out
    }
}

/// A device's cumulative distance in one record: `distance_m` (FTMS total distance, RSC
/// total distance), else a wheel sensor's revolutions × its wheel circumference (CSC).
struct DistanceReading {
    var meters: Double
    /// Where the protocol's counter wraps back to 0, in metres: FTMS counts in a uint24 of
    /// metres, RSC in a uint32 of decimetres, CSC wheel revolutions in a uint32.
    var wrapsAt: Double?

    init?(_ r: WearMetrics) {
        if let d = r.metrics["distance_m"] {
            meters = d
            wrapsAt = switch r.source {
            case "ble_ftms": 16_777_216
            case "ble_rsc": 429_496_729.6
            default: nil
            }
        } else if let revolutions = r.metrics["wheel_revs_total"], let c = r.meta["wheel_circumference_m"].flatMap(Double.init), c > 0 {
            meters = revolutions * c
            wrapsAt = 4_294_967_296 * c
        } else {
            return nil
        }
        guard meters.isFinite, meters >= 0 else { return nil }
    }
}

/// Metres covered, per device and summed: the increases between a device's successive
/// readings. A device's first reading is where it stood (not counted). A step no one
/// could cover in the time between the two readings (faster than `maximumSpeed`, with
/// `slack`) is a glitch: nothing counts and the next step starts from the new reading.
/// A reading lower than the one before is a counter that wrapped (the distance across
/// the wrap counts, when it is plausible) or a machine that restarted counting (its new
/// reading, when plausible, is what it covered since the restart); otherwise a glitch.
struct DistanceCounter {
    /// 30 m/s (108 km/h): beyond any treadmill, rower or indoor bike.
    static let maximumSpeed = 30.0
    /// Metres allowed on top, for readings stamped close together.
    static let slack = 30.0

    private(set) var total: Double?
    private var previous: [String: (meters: Double, ms: Int64)] = [:]

    mutating func add(_ record: WearMetrics) {
        guard let reading = DistanceReading(record) else { return }
        let ms = record.timestamp.millisecondsSince1970
        if let p = previous[record.deviceID] {
            total = (total ?? 0) + Self.step(from: p.meters, to: reading, seconds: Double(ms - p.ms) / 1000)
        } else if total == nil {
            total = 0
        }
        previous[record.deviceID] = (reading.meters, ms)
    }

    static func step(from before: Double, to reading: DistanceReading, seconds: Double) -> Double {
        let plausible = maximumSpeed * max(seconds, 0) + slack
        let now = reading.meters
        if now >= before { return now - before <= plausible ? now - before : 0 }
        if let span = reading.wrapsAt, before < span, span - before + now <= plausible { return span - before + now }
        return now <= plausible ? now : 0
    }
}
