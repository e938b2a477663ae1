// SPDX-License-Identifier: MIT

/// A classified beat as the queue hands it out.
struct ClassifiedBeat: Sendable {
    /// Time the beat ended (seconds, caller's epoch).
    var time: Double
    var rr: Double
    var beatClass: BeatClass
    /// Whether the beat before it in the queue is of the same segment, so that a
    /// successive difference may span the two.
    var continuesPrevious: Bool
}

/// FIFO of classified beats in a ring that grows by half only when full (no
/// Foundation/Collections).
///
/// A gateway keeps every beat of the longest HRV window for each strap (about 750 beats
/// per strap for 300 s at 150 bpm), so the layout is part of its memory budget. A beat
/// takes 17 bytes: its time and RR as `Double`s (exact, so a window over a stream equals
/// the batch analysis of the same beats) in one ring, and a byte of class and segment
/// continuity in another. Segments are not stored as numbers: a window only asks whether
/// a beat continues the one before it.
///
/// A sliding window takes beats off the front as fast as it appends them, so the ring
/// settles at the window's largest beat count plus at most half. Measured with 50 straps
/// (heaptrack, `blegate run`): an array that dropped its front in chunks, of
/// 32-byte beats, was 3.2 MB of `blegate run`'s heap after 10 minutes; a ring of 24-byte
/// beats doubling when full, 1.23 MB.
struct BeatQueue: Sendable {
    private struct Timing: Sendable {
        var time: Double
        var rr: Double
    }

    private var timings: [Timing] = []
    /// Bits 0–1: the class; bit 2: continues the previous beat.
    private var tags: [UInt8] = []
    /// Ring index of the oldest beat.
    private var head = 0
    private(set) var count = 0
    /// Beats taken off the front since the start: logical index `i` (what `firstIndex`,
    /// `endIndex` and the subscript use) is the `i - removed`-th beat now in the queue.
    private var removed = 0
    /// Segment of the newest beat appended (evicted or not); nil before the first.
    private(set) var tailSegment: Int?

    var isEmpty: Bool { count == 0 }

    mutating func append(time: Double, rr: Double, segment: Int, beatClass: BeatClass) {
        if count == timings.count { grow() }
        let s = slot(count)
        timings[s] = Timing(time: time, rr: rr)
        tags[s] = Self.tag(beatClass) | (tailSegment == segment ? 4 : 0)
        tailSegment = segment
        count += 1
    }

    /// Drops beats that ended at or before `time`.
    mutating func removeEnded(atOrBefore time: Double) {
        while count > 0, timings[head].time <= time {
            head = head + 1 == timings.count ? 0 : head + 1
            count -= 1
            removed += 1
        }
    }

    /// Logical index of the first beat ending after `time` (binary search; times are sorted).
    func firstIndex(after time: Double) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if timings[slot(mid)].time <= time { lo = mid + 1 } else { hi = mid }
        }
        return removed + lo
    }

    var endIndex: Int { removed + count }
    /// Beats the ring holds before it grows.
    var capacity: Int { timings.count }
    /// Bytes of ring storage per beat held (without the two arrays' headers).
    static var bytesPerBeat: Int { MemoryLayout<Timing>.stride + MemoryLayout<UInt8>.stride }

    subscript(i: Int) -> ClassifiedBeat {
        let s = slot(i - removed)
        let tag = tags[s]
        return ClassifiedBeat(time: timings[s].time, rr: timings[s].rr,
                              beatClass: Self.classes[Int(tag & 3)], continuesPrevious: tag & 4 != 0)
    }

    var last: ClassifiedBeat? { count > 0 ? self[endIndex - 1] : nil }

    /// Ring index of the `offset`-th beat from the front.
    private func slot(_ offset: Int) -> Int {
        let s = head + offset
        return s < timings.count ? s : s - timings.count
    }

    private static let classes: [BeatClass] = [.normal, .outOfRange, .short, .long]

    private static func tag(_ c: BeatClass) -> UInt8 {
        switch c {
        case .normal: 0
        case .outOfRange: 1
        case .short: 2
        case .long: 3
        }
    }

    /// Grows the ring by half (16 beats at first), unrolled so the oldest beat is at 0 again.
    private mutating func grow() {
        let capacity = Swift.max(16, timings.count + timings.count / 2)
        var newTimings: [Timing] = []
        var newTags: [UInt8] = []
        newTimings.reserveCapacity(capacity)
        newTags.reserveCapacity(capacity)
        for i in 0..<count {
            newTimings.append(timings[slot(i)])
            newTags.append(tags[slot(i)])
        }
        newTimings.append(contentsOf: repeatElement(Timing(time: 0, rr: 0), count: capacity - count))
        newTags.append(contentsOf: repeatElement(0, count: capacity - count))
        timings = newTimings
        tags = newTags
        head = 0
    }
}
