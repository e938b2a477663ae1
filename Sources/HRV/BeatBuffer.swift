// SPDX-License-Identifier: MIT

/// A classified beat.
struct ClassifiedBeat: Sendable {
    /// Time the beat ended (seconds, caller's epoch).
    var time: Double
    var rr: Double
    var segment: Int
    var beatClass: BeatClass
}

/// FIFO of beats with amortised O(1) removal from the front (no Foundation/Collections).
struct BeatQueue: Sendable {
    private var storage: [ClassifiedBeat] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ beat: ClassifiedBeat) { storage.append(beat) }

    /// Drops beats that ended at or before `time`.
    mutating func removeEnded(atOrBefore time: Double) {
        while head < storage.count, storage[head].time <= time { head += 1 }
        if head > 64, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Index of the first beat ending after `time` (binary search; times are sorted).
    func firstIndex(after time: Double) -> Int {
        var lo = head, hi = storage.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if storage[mid].time <= time { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    var endIndex: Int { storage.count }
    subscript(i: Int) -> ClassifiedBeat { storage[i] }
    var last: ClassifiedBeat? { count > 0 ? storage[storage.count - 1] : nil }
}
