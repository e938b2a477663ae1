import Simulator
import Testing
import Timing

@Suite("Physiology and payload encoding (pure)")
struct PhysiologyTests {
    @Test("RR intervals follow the heart rate; HR stays in 40-200; ectopics are present but rare")
    func beats() {
        var totalEctopic = 0, totalBeats = 0
        for seed in UInt64(1)...4 {
            var rng = SeededRandom(seed: seed)
            let profile = HeartRateProfile(&rng)
            var gen = BeatGenerator(profile: profile, rng: rng.derived("beats"))
            var window: [Beat] = []
            for _ in 0..<6000 {
                let b = gen.next()
                #expect(b.heartRate >= 40 && b.heartRate <= 200)
                #expect(b.rrMilliseconds >= 280 && b.rrMilliseconds <= 1500)
                totalBeats += 1
                if b.ectopic { totalEctopic += 1 }
                window.append(b)
                if window.count == 60 {
                    let meanRR = window.map(\.rrMilliseconds).reduce(0, +) / 60
                    let meanHR = window.map(\.heartRate).reduce(0, +) / 60
                    // Mean RR = 60000 / HR within a few percent (variability, ectopics).
                    #expect(abs(meanRR - 60_000 / meanHR) / (60_000 / meanHR) < 0.06)
                    // Sum of RR = elapsed time.
                    #expect(abs(window.map(\.rrMilliseconds).reduce(0, +) / 1000 - (window[59].time - window[0].time + window[0].rrMilliseconds / 1000)) < 1e-6)
                    window.removeAll()
                }
            }
        }
        #expect(totalEctopic > 0)
        #expect(Double(totalEctopic) / Double(totalBeats) < 0.01)
    }

    @Test("Heart rate rises and falls through the class")
    func profileShape() {
        var rng = SeededRandom(seed: 7)
        let profile = HeartRateProfile(&rng)
        let targets = stride(from: 0.0, to: profile.totalDuration, by: 10).map { profile.target(at: $0).bpm }
        #expect(targets.max()! - targets.min()! > 60)
        #expect(profile.phases.contains { $0.name == "interval" } && profile.phases.contains { $0.name == "cool-down" })
    }

    @Test("The stream's RR ticks add up to strap time, contact comes and goes, battery drains")
    func stream() {
        var s = HeartRateStream(traits: HeartRateTraits(energySupported: true), rng: SeededRandom(seed: 3))
        var ticks = 0, energyCount = 0, noContact = 0, rrless = 0
        let startBattery = s.batteryPercent
        let n = 3600
        for _ in 0..<n {
            let m = s.next(interval: 1)
            ticks += m.rrIntervals.reduce(0) { $0 + Int($1) }
            if m.energyExpended != nil { energyCount += 1 }
            if m.contact == .notDetected { noContact += 1 }
            if m.rrIntervals.isEmpty { rrless += 1 }
            #expect(m.bytes.count <= HeartRateMeasurement.maximumLength)
            if m.contact == .detected { #expect(m.heartRate >= 40 && m.heartRate <= 200) }
        }
        let rrSeconds = Double(ticks) / 1024
        // Beats missed during contact loss are the only gap.
        #expect(rrSeconds <= Double(n) + 2)
        #expect(rrSeconds >= Double(n - noContact) - 5)
        #expect(energyCount == n / 10)
        #expect(noContact > 0 && noContact < n / 5)
        #expect(rrless > 0)
        #expect(s.batteryPercent < startBattery)
    }

    @Test("Heart Rate Measurement encoding matches the reference vectors")
    func encoding() {
        #expect(HeartRateMeasurement(heartRate: 0x55).bytes == [0x00, 0x55])
        #expect(HeartRateMeasurement(heartRate: 255, contact: .notDetected).bytes == [0x04, 0xFF])
        #expect(HeartRateMeasurement(heartRate: 0x55, contact: .detected, energyExpended: 50, rrIntervals: [33]).bytes
            == [0x1E, 0x55, 0x32, 0x00, 0x21, 0x00])
        #expect(HeartRateMeasurement(heartRate: 257, contact: .detected, energyExpended: 306, rrIntervals: [1, 258, 65535]).bytes
            == [0x1F, 0x01, 0x01, 0x32, 0x01, 0x01, 0x00, 0x02, 0x01, 0xFF, 0xFF])
        #expect(HeartRateMeasurement.rrCapacity(sixteenBit: false, energy: false) == 9)
        #expect(HeartRateMeasurement.rrCapacity(sixteenBit: true, energy: true) == 7)
    }

    @Test("Malformed payloads are all too short for what they announce")
    func malformed() {
        var rng = SeededRandom(seed: 9)
        for _ in 0..<200 {
            let b = MalformedHeartRatePayload.make(&rng, heartRate: 80)
            guard let flags = b.first else { continue }
            let need = 1 + (flags & 1 == 1 ? 2 : 1) + (flags & 8 == 8 ? 2 : 0)
            #expect(b.count < need)
        }
    }

    @Test("Same seed, same room and same payloads; addresses are well-formed")
    func determinism() {
        let a = DeviceCatalog.devices(seed: 42, straps: 6, watches: 2)
        let b = DeviceCatalog.devices(seed: 42, straps: 6, watches: 2)
        let c = DeviceCatalog.devices(seed: 43, straps: 6, watches: 2)
        #expect(a == b)
        #expect(a.map(\.address) != c.map(\.address))
        #expect(Set(a.map(\.address)).count == a.count)
        for d in a {
            let first = UInt8(d.address.prefix(2), radix: 16)!
            if d.addressType == "random" { #expect(first & 0xC0 == 0xC0) }
        }
        #expect(a.contains { $0.addressType == "public" } && a.contains { $0.addressType == "random" })
        #expect(a.contains { $0.name.hasPrefix("Polar H10 ") } && a.contains { $0.name.hasPrefix("HRM-Pro:") }
            && a.contains { $0.name.hasPrefix("TICKR ") } && a.contains { $0.name.hasPrefix("COOSPO H6 ") }
            && a.contains { $0.name == "Forerunner 255" })
        for d in a {
            var s1 = HeartRateStream(traits: d.model.traits, rng: SeededRandom(seed: d.seed).derived("heart"))
            var s2 = HeartRateStream(traits: d.model.traits, rng: SeededRandom(seed: d.seed).derived("heart"))
            for _ in 0..<300 { #expect(s1.next(interval: 1).bytes == s2.next(interval: 1).bytes) }
        }
    }
}
