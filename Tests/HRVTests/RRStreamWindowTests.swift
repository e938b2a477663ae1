// SPDX-License-Identifier: MIT
@testable import HRV
import Timing
import Testing

/// Windows over a stream with segment breaks, against a model that keeps every beat's
/// segment number: the stream itself keeps only whether a beat continues the one before.
@Suite("RR stream windows across segments")
struct RRStreamWindowTests {
    /// A beat as the model keeps it: with its segment number.
    private typealias Beat = (time: Double, rr: Double, segment: Int)

    /// Same arithmetic as `RRStream.window`, from the model's beats and the stream's classes.
    private func reference(_ beats: [Beat], _ classes: [BeatClass], seconds: Double, end: Double, slack: Double) -> (beats: Int, artifacts: Int, td: HRVTimeDomain?) {
        var acc = TimeDomainAccumulator()
        var n = 0, artifacts = 0
        var previous: (accepted: Bool, segment: Int)?
        for (b, cls) in zip(beats, classes) where b.time > end - seconds && b.time <= end + slack {
            n += 1
            if cls.isArtifact {
                artifacts += 1
                previous = (false, b.segment)
            } else {
                acc.add(b.rr, continuesPrevious: previous.map { $0.accepted && $0.segment == b.segment } ?? false)
                previous = (true, b.segment)
            }
        }
        return (n, artifacts, acc.result)
    }

    @Test("random breaks, artifacts and windows (pending beats included) match the model", arguments: [1, 2, 3, 4])
    func randomWindows(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var stream = RRStream(retention: 120)
        var model: [Beat] = []
        var t = 1_800_000_000.0
        var segment = 0
        for step in 0..<1500 {
            if rng.below(60) == 0 {
                stream.breakSegment()
                segment += 1
                // Now and then the new segment's time line starts before the old one ends
                // (an anchor earlier than the last beat), so times are not sorted there.
                t += rng.below(4) == 0 ? -0.5 : Double(rng.below(20))
            }
            var rr = 600 + Double(rng.below(400)) + Double(rng.below(1024)) / 1024
            if rng.below(40) == 0 { rr *= 0.5 }  // an extra beat
            if rng.below(300) == 0 { rr = 2500 }  // out of range
            t += rr / 1000
            stream.appendBeat(rr, time: t)
            model.append((time: t, rr: rr, segment: segment))
            // The stream evicts from the front only: the model keeps as many of the newest.
            model = Array(model.suffix(stream.beatCount))
            if step % 37 == 0 {
                let kept = model
                let classes = stream.classes
                for (seconds, back, slack) in [(60.0, 0.0, 0.0), (30.0, 5.0, 1.0), (100.0, 0.3, 0.0), (5.0, 0.0, 2.0)] {
                    let w = stream.window(seconds: seconds, endingAt: t - back, quality: HRVQualityRules(), slack: slack)
                    let r = reference(kept, classes, seconds: seconds, end: t - back, slack: slack)
                    #expect(w.beatCount == r.beats && w.artifactCount == r.artifacts)
                    #expect(w.timeDomain == r.td, "seed \(seed) step \(step) window \(seconds) s")
                }
            }
        }
    }
}

private extension SeededRandom {
    /// A whole number in 0..<n.
    mutating func below(_ n: UInt64) -> UInt64 { UInt64(unit() * Double(n)) }
}
