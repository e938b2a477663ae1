// SPDX-License-Identifier: MIT
@testable import HRV
import Testing

/// The ring behind every stream's window: order, eviction and look-ups must not depend on
/// where the ring happens to wrap or when it grows.
@Suite("Beat queue")
struct BeatQueueTests {
    /// A plain array model of the queue: the beats appended and not yet evicted.
    private func check(_ q: BeatQueue, against model: [ClassifiedBeat], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(q.count == model.count, sourceLocation: sourceLocation)
        var i = q.firstIndex(after: -.infinity)
        var seen: [Double] = []
        while i < q.endIndex { seen.append(q[i].time); i += 1 }
        #expect(seen == model.map(\.time), sourceLocation: sourceLocation)
        #expect(q.last?.time == model.last?.time, sourceLocation: sourceLocation)
    }

    @Test("A sliding window through many wraps and growths keeps order and look-ups")
    func slidingWindow() {
        var q = BeatQueue()
        var model: [ClassifiedBeat] = []
        var t = 0.0
        // A window whose length in beats changes (heart rate rising and falling), so the
        // ring both wraps while steady and grows while wrapped.
        for step in 0..<5000 {
            let rr = 400.0 + 300.0 * Double((step / 700) % 3)
            t += rr / 1000
            let beat = ClassifiedBeat(time: t, rr: rr, segment: step / 900, beatClass: step % 97 == 0 ? .short : .normal)
            q.append(beat)
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
        #expect(q[q.endIndex - 1].segment == 4999 / 900)
        #expect(q[q.endIndex - 1].rr == model.last?.rr)
    }

    @Test("Emptied by eviction, it takes new beats at the next logical index; a beat is 24 bytes")
    func emptiedByEviction() {
        var q = BeatQueue()
        #expect(q.isEmpty && q.last == nil && q.firstIndex(after: 0) == q.endIndex)
        for k in 1...40 { q.append(ClassifiedBeat(time: Double(k), rr: 1000, segment: 0, beatClass: .normal)) }
        q.removeEnded(atOrBefore: 40)
        let before = q.endIndex
        #expect(q.isEmpty && q.last == nil)
        #expect(q.firstIndex(after: -.infinity) == q.endIndex)
        q.append(ClassifiedBeat(time: 100, rr: 900, segment: 1, beatClass: .long))
        #expect(q.endIndex == before + 1 && q.count == 1)
        #expect(q[q.endIndex - 1].beatClass == .long && q[q.endIndex - 1].segment == 1)
        #expect(MemoryLayout<ClassifiedBeat>.stride == 24)
    }
}
