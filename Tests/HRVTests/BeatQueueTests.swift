// SPDX-License-Identifier: MIT
@testable import HRV
import Testing

/// The ring behind every stream's window: order, eviction and look-ups must not depend on
/// where the ring happens to wrap or when it grows.
@Suite("Beat queue")
struct BeatQueueTests {
    /// What the model remembers of an appended beat.
    private struct Appended {
        var time: Double
        var rr: Double
        var segment: Int
        var beatClass: BeatClass
    }

    /// A plain array model of the queue: the beats appended and not yet evicted.
    private func check(_ q: BeatQueue, against model: [Appended], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(q.count == model.count, sourceLocation: sourceLocation)
        var i = q.firstIndex(after: -.infinity)
        var seen: [ClassifiedBeat] = []
        while i < q.endIndex { seen.append(q[i]); i += 1 }
        #expect(seen.map(\.time) == model.map(\.time), sourceLocation: sourceLocation)
        #expect(seen.map(\.rr) == model.map(\.rr), sourceLocation: sourceLocation)
        #expect(seen.map(\.beatClass) == model.map(\.beatClass), sourceLocation: sourceLocation)
        // Every beat but the oldest (whose predecessor may be evicted) continues the one
        // before it exactly when the two are of one segment.
        for k in model.indices.dropFirst() {
            #expect(seen[k].continuesPrevious == (model[k].segment == model[k - 1].segment), sourceLocation: sourceLocation)
        }
        #expect(q.last?.time == model.last?.time, sourceLocation: sourceLocation)
    }

    @Test("A sliding window through many wraps and growths keeps order, classes, segments and look-ups")
    func slidingWindow() {
        var q = BeatQueue()
        var model: [Appended] = []
        var t = 0.0
        let classes: [BeatClass] = [.normal, .outOfRange, .short, .long]
        // A window whose length in beats changes (heart rate rising and falling), so the
        // ring both wraps while steady and grows while wrapped.
        for step in 0..<5000 {
            let rr = 400.0 + 300.0 * Double((step / 700) % 3)
            t += rr / 1000
            let beat = Appended(time: t, rr: rr, segment: step / 900 + (step % 311 == 0 ? 1 : 0),
                                beatClass: step % 97 == 0 ? classes[step % 4] : .normal)
            q.append(time: beat.time, rr: beat.rr, segment: beat.segment, beatClass: beat.beatClass)
            model.append(beat)
            let cutoff = t - 60
            q.removeEnded(atOrBefore: cutoff)
            model.removeAll { $0.time <= cutoff }
            if step % 250 == 0 { check(q, against: model) }
        }
        check(q, against: model)
        // firstIndex(after:) against a linear search, at and between beat times.
        for probe in stride(from: t - 70, through: t + 1, by: 0.37) {
            let i = q.firstIndex(after: probe)
            let expected = model.firstIndex { $0.time > probe } ?? model.count
            #expect(i - q.firstIndex(after: -.infinity) == expected)
            if i < q.endIndex { #expect(q[i].time > probe) }
        }
        #expect(q.tailSegment == 4999 / 900)
        #expect(q[q.endIndex - 1].rr == model.last?.rr)
    }

    @Test("Emptied by eviction, it takes new beats at the next logical index")
    func emptiedByEviction() {
        var q = BeatQueue()
        #expect(q.isEmpty && q.last == nil && q.firstIndex(after: 0) == q.endIndex && q.tailSegment == nil)
        for k in 1...40 { q.append(time: Double(k), rr: 1000, segment: 0, beatClass: .normal) }
        q.removeEnded(atOrBefore: 40)
        let before = q.endIndex
        #expect(q.isEmpty && q.last == nil)
        #expect(q.firstIndex(after: -.infinity) == q.endIndex)
        q.append(time: 100, rr: 900, segment: 1, beatClass: .long)
        #expect(q.endIndex == before + 1 && q.count == 1)
        let newest = q[q.endIndex - 1]
        #expect(newest.beatClass == .long && !newest.continuesPrevious && q.tailSegment == 1)
        q.append(time: 101, rr: 1000, segment: 1, beatClass: .normal)
        #expect(q[q.endIndex - 1].continuesPrevious)
    }

    /// The layout is part of the gateway's memory budget (docs/benchmarks.md): 300 s of
    /// beats at 150 bpm for each of 50 straps.
    @Test("750 beats take 17 bytes each in a ring of at most one and a half times that")
    func footprint() {
        var q = BeatQueue()
        for k in 0..<750 { q.append(time: Double(k) * 0.4, rr: 400, segment: 0, beatClass: .normal) }
        #expect(BeatQueue.bytesPerBeat == 17)
        #expect(q.capacity >= 750 && q.capacity <= 750 * 3 / 2)
        // Steady sliding at the same count does not grow it.
        let settled = q.capacity
        for k in 750..<5000 {
            q.append(time: Double(k) * 0.4, rr: 400, segment: 0, beatClass: .normal)
            q.removeEnded(atOrBefore: Double(k) * 0.4 - 300)
        }
        #expect(q.count == 750 && q.capacity == settled)
    }
}
