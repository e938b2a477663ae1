// SPDX-License-Identifier: MIT

/// A classified beat.
///
/// 24 bytes: a gateway keeps every beat of the longest HRV window for each strap (about
/// 750 beats per strap for 300 s at 150 bpm), so the layout is part of its memory budget.
struct ClassifiedBeat: Sendable {
    /// Time the beat ended (seconds, caller's epoch).
    var time: Double
    var rr: Double
    private var segmentNumber: UInt32
    var beatClass: BeatClass

    /// Segments are counted per stream; one every second for 136 years would still fit,
    /// and the comparison only needs equality with the neighbour's, so wrapping is harmless.
    var segment: Int { Int(segmentNumber) }

    init(time: Double, rr: Double, segment: Int, beatClass: BeatClass) {
        self.time = time
        self.rr = rr
        self.segmentNumber = UInt32(truncatingIfNeeded: segment)
        self.beatClass = beatClass
    }
}

/// FIFO of beats in a ring that grows by doubling only when full (no Foundation/Collections).
///
/// A sliding window takes beats off the front as fast as it appends them, so the ring
/// settles at the window's largest beat count rounded up to a power of two. An array
/// that drops its front in chunks holds up to twice the live beats, and its capacity
/// doubles again on top of that: measured with 50 straps, 3.2 MB of `blegate run`'s heap
/// after 10 minutes was beat arrays (heaptrack, docs/run.md "Memory").
struct BeatQueue: Sendable {
    private var ring: [ClassifiedBeat] = []
    /// Ring index of the oldest beat.
    private var head = 0
    private(set) var count = 0
    /// Beats taken off the front since the start: logical index `i` (what `firstIndex`,
    /// `endIndex` and the subscript use) is the `i - removed`-th beat now in the queue.
    private var removed = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ beat: ClassifiedBeat) {
        if count == ring.count { grow() }
        ring[slot(count)] = beat
        count += 1
    }

    /// Drops beats that ended at or before `time`.
    mutating func removeEnded(atOrBefore time: Double) {
        while count > 0, ring[head].time <= time {
            head = head + 1 == ring.count ? 0 : head + 1
            count -= 1
            removed += 1
        }
    }

    /// Logical index of the first beat ending after `time` (binary search; times are sorted).
    func firstIndex(after time: Double) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ring[slot(mid)].time <= time { lo = mid + 1 } else { hi = mid }
        }
        return removed + lo
    }

    var endIndex: Int { removed + count }
    subscript(i: Int) -> ClassifiedBeat { ring[slot(i - removed)] }
    var last: ClassifiedBeat? { count > 0 ? ring[slot(count - 1)] : nil }

    /// Ring index of the `offset`-th beat from the front.
    private func slot(_ offset: Int) -> Int {
        let s = head + offset
        return s < ring.count ? s : s - ring.count
    }

    /// Doubles the ring (16 beats at first), unrolled so the oldest beat is at 0 again.
    private mutating func grow() {
        let capacity = Swift.max(16, ring.count * 2)
        var bigger: [ClassifiedBeat] = []
        bigger.reserveCapacity(capacity)
        for i in 0..<count { bigger.append(ring[slot(i)]) }
        let filler = ClassifiedBeat(time: 0, rr: 0, segment: 0, beatClass: .normal)
        while bigger.count < capacity { bigger.append(filler) }
        ring = bigger
        head = 0
    }
}
