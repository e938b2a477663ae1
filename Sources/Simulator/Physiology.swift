#if canImport(Glibc)
import Glibc
#endif
import Timing

/// A group-class session as the heart sees it: rest, warm-up, work/recovery
/// intervals, cool-down, then around again. Only targets live here; the heart
/// approaches them with a lag (`BeatGenerator`), as a real one does.
public struct HeartRateProfile: Sendable {
    public struct Phase: Sendable, Hashable {
        public var name: String
        public var duration: Double
        public var startBPM: Double
        public var endBPM: Double
    }

    public let restingBPM: Double
    public let phases: [Phase]
    public let totalDuration: Double

    public init(_ rng: inout SeededRandom) {
        let resting = rng.uniform(52...72)
        let peak = rng.uniform(158...182)
        var phases: [Phase] = [Phase(name: "rest", duration: rng.uniform(45...120), startBPM: resting + 4, endBPM: resting + 8)]
        let warm = rng.uniform(110...128)
        phases.append(Phase(name: "warm-up", duration: rng.uniform(240...420), startBPM: resting + 10, endBPM: warm))
        for _ in 0..<rng.int(6...10) {
            let work = min(peak, rng.uniform(145...peak))
            phases.append(Phase(name: "interval", duration: rng.uniform(50...180), startBPM: work - 6, endBPM: work))
            let recover = rng.uniform(108...132)
            phases.append(Phase(name: "recovery", duration: rng.uniform(50...120), startBPM: recover, endBPM: recover - 4))
        }
        phases.append(Phase(name: "cool-down", duration: rng.uniform(240...360), startBPM: 118, endBPM: resting + 12))
        self.restingBPM = resting
        self.phases = phases
        self.totalDuration = phases.reduce(0) { $0 + $1.duration }
    }

    /// The phase and the target heart rate `t` seconds into the (repeating) session.
    public func target(at t: Double) -> (phase: String, bpm: Double) {
        var rest = t.truncatingRemainder(dividingBy: totalDuration)
        if rest < 0 { rest += totalDuration }
        for p in phases {
            if rest < p.duration {
                return (p.name, p.startBPM + (p.endBPM - p.startBPM) * rest / p.duration)
            }
            rest -= p.duration
        }
        let last = phases[phases.count - 1]
        return (last.name, last.endBPM)
    }
}

/// One heartbeat: when its R-R interval ended and how long it was.
public struct Beat: Sendable, Hashable {
    /// Seconds since the strap started, at the end of the interval.
    public var time: Double
    public var rrMilliseconds: Double
    /// A premature beat; the next interval is its compensatory pause.
    public var ectopic: Bool
    /// The (smoothed) heart rate that set this beat's mean interval.
    public var heartRate: Double
}

/// Produces beat-to-beat intervals whose mean follows the profile (mean RR =
/// 60000 / HR), with respiratory sinus arrhythmia, a little white noise, slow drift
/// and rare premature beats followed by a compensatory pause (so the pair still
/// spans about two normal beats, as in a real ECG).
public struct BeatGenerator: Sendable {
    public let profile: HeartRateProfile
    public private(set) var time: Double
    public private(set) var heartRate: Double
    var drift = 0.0
    var compensatory: Double?
    var rng: SeededRandom
    /// Probability of a premature beat (about 3 per 1000 beats).
    public var ectopicProbability = 0.003

    public init(profile: HeartRateProfile, startTime: Double = 0, rng: SeededRandom) {
        self.profile = profile
        self.time = startTime
        self.heartRate = profile.target(at: startTime).bpm
        self.rng = rng
    }

    public mutating func next() -> Beat {
        let hr = min(200, max(40, heartRate + drift))
        let base = 60_000 / hr
        // Breathing modulates the interval more at rest than under load.
        let breathPeriod = hr < 100 ? 4.5 : (hr < 140 ? 3.2 : 2.4)
        let rsa = 0.045 * min(1, max(0.08, (165 - hr) / 95)) * sin(2 * Double.pi * time / breathPeriod)
        var rr = base * (1 + rsa + 0.012 * rng.gaussian())
        var ectopic = false
        if let pause = compensatory {
            rr = pause
            compensatory = nil
        } else if rng.chance(ectopicProbability) {
            let premature = rr * rng.uniform(0.55...0.72)
            compensatory = 2 * rr - premature
            rr = premature
            ectopic = true
        }
        rr = min(1_500, max(280, rr))
        let dt = rr / 1000
        let target = profile.target(at: time).bpm
        let tau = target > heartRate ? 22.0 : 40.0
        heartRate += (target - heartRate) * (1 - exp(-dt / tau))
        drift += 0.35 * rng.gaussian() * dt.squareRoot()
        drift *= exp(-dt / 90)
        time += dt
        return Beat(time: time, rrMilliseconds: rr, ectopic: ectopic, heartRate: hr)
    }
}

/// How a model of strap fills its Heart Rate Measurement.
public struct HeartRateTraits: Sendable, Hashable {
    public var sixteenBit = false
    public var contactSupported = true
    public var energySupported = false
    public var rrSupported = true
    /// Some straps send 0 bpm when they lose skin contact, others repeat the last value.
    public var zeroWithoutContact = false
    /// Energy Expended rides along on every Nth notification.
    public var energyEvery = 10

    public init(sixteenBit: Bool = false, contactSupported: Bool = true, energySupported: Bool = false,
                rrSupported: Bool = true, zeroWithoutContact: Bool = false, energyEvery: Int = 10) {
        self.sixteenBit = sixteenBit
        self.contactSupported = contactSupported
        self.energySupported = energySupported
        self.rrSupported = rrSupported
        self.zeroWithoutContact = zeroWithoutContact
        self.energyEvery = energyEvery
    }
}

/// The notification stream of one strap: each `next(interval:)` is what the strap
/// sends after `interval` more seconds of its wearer's life. Pure and seeded: the
/// same seed and the same sequence of intervals give the same bytes.
public struct HeartRateStream: Sendable {
    public let traits: HeartRateTraits
    public private(set) var beats: BeatGenerator
    /// Strap time in seconds (advances only while the strap notifies).
    public private(set) var time: Double = 0
    public private(set) var notificationCount = 0
    public private(set) var energyKJ: Double = 0
    public private(set) var contact = true
    public private(set) var lastHeartRate: UInt16 = 0
    /// Every beat produced so far, for tests (bounded).
    public private(set) var recentBeats: [Beat] = []

    var upcoming: Beat
    var pendingRR: [UInt16] = []
    var rrCarryMs = 0.0
    var averaging: [Double] = []
    var contactRNG: SeededRandom
    var nextContactLoss: Double
    var contactReturns: Double = 0
    let batteryStart: Double
    let batteryDrainSeconds: Double

    public init(traits: HeartRateTraits, rng: SeededRandom) {
        var r = rng
        var profileRNG = r.derived("profile")
        let profile = HeartRateProfile(&profileRNG)
        // Straps are put on at different moments of the class.
        let offset = r.uniform(0...min(600, profile.totalDuration / 3))
        var beats = BeatGenerator(profile: profile, startTime: offset, rng: r.derived("beats"))
        self.traits = traits
        self.upcoming = beats.next()
        self.beats = beats
        self.contactRNG = r.derived("contact")
        self.nextContactLoss = contactRNG.uniform(180...720)
        self.batteryStart = r.uniform(38...100)
        self.batteryDrainSeconds = r.uniform(150...420)
        self.time = 0
        self.startOffset = offset
    }

    let startOffset: Double

    /// Battery percentage now (drains with strap time, never below 1).
    public var batteryPercent: UInt8 {
        UInt8(max(1, min(100, (batteryStart - time / batteryDrainSeconds).rounded(.down))))
    }

    /// Resets the Energy Expended counter (control point 0x2A39 value 0x01).
    public mutating func resetEnergy() {
        energyKJ = 0
    }

    public mutating func next(interval: Double) -> HeartRateMeasurement {
        time += interval
        notificationCount += 1
        updateContact()
        let beatClockNow = startOffset + time
        var detected: [Double] = []
        while upcoming.time <= beatClockNow {
            let beat = upcoming
            upcoming = beats.next()
            recentBeats.append(beat)
            if recentBeats.count > 4096 { recentBeats.removeFirst(1024) }
            if contact { detected.append(beat.rrMilliseconds) }
        }
        // Energy (kJ) from a heart-rate-based expenditure estimate, at least 1 kcal/min.
        let hrNow = beats.heartRate
        let kcalPerMinute = max(1, (-55.0969 + 0.6309 * hrNow + 0.1988 * 75 + 0.2017 * 35) / 4.184)
        energyKJ += kcalPerMinute * 4.184 / 60 * interval

        for rr in detected {
            averaging.append(rr)
            if averaging.count > 4 { averaging.removeFirst() }
            if traits.rrSupported {
                let exact = rr + rrCarryMs
                let ticks = (exact * 1.024).rounded()
                rrCarryMs = exact - ticks / 1.024
                pendingRR.append(UInt16(min(65535, max(1, ticks))))
            }
        }
        var bpm: UInt16
        if contact {
            if averaging.isEmpty {
                bpm = UInt16(hrNow.rounded())
            } else {
                bpm = UInt16((60_000 / (averaging.reduce(0, +) / Double(averaging.count))).rounded())
            }
            bpm = min(200, max(40, bpm))
        } else {
            bpm = traits.zeroWithoutContact ? 0 : lastHeartRate
        }
        if contact || traits.zeroWithoutContact { lastHeartRate = bpm }
        if !contact { averaging.removeAll() }

        let withEnergy = traits.energySupported && (notificationCount % max(1, traits.energyEvery) == 1 || traits.energyEvery == 1)
        let capacity = HeartRateMeasurement.rrCapacity(sixteenBit: traits.sixteenBit, energy: withEnergy)
        if pendingRR.count > 2 * capacity { pendingRR.removeFirst(pendingRR.count - 2 * capacity) }
        let sent = Array(pendingRR.prefix(capacity))
        pendingRR.removeFirst(sent.count)
        let contactState: HeartRateMeasurement.SensorContact =
            traits.contactSupported ? (contact ? .detected : .notDetected) : .notSupported
        return HeartRateMeasurement(
            heartRate: bpm, sixteenBit: traits.sixteenBit, contact: contactState,
            energyExpended: withEnergy ? UInt16(min(65535, energyKJ.rounded(.down))) : nil,
            rrIntervals: sent)
    }

    private mutating func updateContact() {
        if contact, time >= nextContactLoss {
            contact = false
            contactReturns = time + contactRNG.uniform(4...25)
        } else if !contact, time >= contactReturns {
            contact = true
            nextContactLoss = time + contactRNG.uniform(240...900)
        }
    }
}
