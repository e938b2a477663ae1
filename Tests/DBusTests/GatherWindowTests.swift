// SPDX-License-Identifier: MIT
import Testing
import Timing

/// The window readers gather in: quartered by a read that found a burst, doubled back by
/// reads that found little, never past the configured limit.
@Suite("Gathering window")
struct GatherWindowTests {
    static let ms: Int64 = 1_000_000

    @Test("a burst quarters the window down to 0.5 ms; quiet reads double it back to the limit")
    func adapts() {
        var w = GatherWindow(limit: 500 * Self.ms, burst: 64)
        #expect(w.nanoseconds == 500 * Self.ms)
        w.adapt(found: 64, limit: 500 * Self.ms)
        #expect(w.nanoseconds == 125 * Self.ms)
        // Between a quarter of the burst and the burst: the window holds.
        w.adapt(found: 40, limit: 500 * Self.ms)
        #expect(w.nanoseconds == 125 * Self.ms)
        for _ in 0..<20 { w.adapt(found: 500, limit: 500 * Self.ms) }
        #expect(w.nanoseconds == GatherWindow.floorNanoseconds)
        w.adapt(found: 15, limit: 500 * Self.ms)
        #expect(w.nanoseconds == 2 * GatherWindow.floorNanoseconds)
        for _ in 0..<20 { w.adapt(found: 0, limit: 500 * Self.ms) }
        #expect(w.nanoseconds == 500 * Self.ms)
    }

    @Test("halving settles where a window brings between a quarter of a burst and a burst")
    func halvingSettles() {
        // 500 signals a second, a 500 ms limit, bursts of 96 (the dispatcher's).
        var w = GatherWindow(limit: 500 * Self.ms, burst: 96, shrink: 2)
        let perSecond = 500.0
        var windows: [Int64] = []
        for _ in 0..<10 {
            w.adapt(found: Int(perSecond * Double(w.nanoseconds) / 1e9), limit: 500 * Self.ms)
            windows.append(w.nanoseconds / Self.ms)
        }
        #expect(windows == [250, 125, 125, 125, 125, 125, 125, 125, 125, 125])
        // A window that happens to bring a few more than the burst halves once; the next
        // brings half as many, inside the band, and the window stays.
        w.adapt(found: 100, limit: 500 * Self.ms)
        #expect(w.nanoseconds == 62_500_000)
        w.adapt(found: 31, limit: 500 * Self.ms)
        #expect(w.nanoseconds == 62_500_000)
    }

    @Test("a lowered limit takes effect at the next read; zero turns gathering off")
    func followsTheLimit() {
        var w = GatherWindow(limit: 500 * Self.ms, burst: 32)
        w.adapt(found: 1, limit: 200 * Self.ms)
        #expect(w.nanoseconds == 200 * Self.ms)
        w.adapt(found: 100, limit: 0)
        #expect(w.nanoseconds == 0)
        // Back on: from the floor, doubling.
        w.adapt(found: 0, limit: 200 * Self.ms)
        #expect(w.nanoseconds == GatherWindow.floorNanoseconds)
        w.adapt(found: 0, limit: 200 * Self.ms)
        #expect(w.nanoseconds == 2 * GatherWindow.floorNanoseconds)
        // A limit below the floor is the floor's bound, not raised to it.
        var small = GatherWindow(limit: 100_000, burst: 32)
        small.adapt(found: 100, limit: 100_000)
        #expect(small.nanoseconds == 100_000)
    }
}
