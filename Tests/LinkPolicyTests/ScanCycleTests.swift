// SPDX-License-Identifier: MIT
import LinkPolicy
import Testing

@Suite("Scanning in bursts once a class is settled")
struct ScanCycleTests {
    @Test("a pause first, then the burst at the end of every period")
    func phases() throws {
        let c = try #require(ScanCycle(burst: 5, period: 30))
        #expect(!c.scans(elapsed: 0))
        #expect(!c.scans(elapsed: 24.9))
        #expect(c.scans(elapsed: 25))
        #expect(c.scans(elapsed: 29.9))
        #expect(!c.scans(elapsed: 30))
        #expect(c.scans(elapsed: 55.5))
        #expect(!c.scans(elapsed: 3_600 + 1))
        // A clock that steps back before the start counts as the start.
        #expect(!c.scans(elapsed: -3))
    }

    @Test("the time to the next switch, from either side")
    func untilChange() throws {
        let c = try #require(ScanCycle(burst: 5, period: 30))
        #expect(c.untilChange(elapsed: 0) == 25)
        #expect(c.untilChange(elapsed: 20) == 5)
        #expect(c.untilChange(elapsed: 25) == 5)
        #expect(c.untilChange(elapsed: 28) == 2)
        #expect(c.untilChange(elapsed: 30) == 25)
        #expect(c.untilChange(elapsed: 61) == 24)
        // Following the switches walks the cycle: off 25 s, on 5 s, off again.
        var t = 0.0, states: [Bool] = []
        for _ in 0..<4 {
            states.append(c.scans(elapsed: t))
            t += c.untilChange(elapsed: t)
        }
        #expect(states == [false, true, false, true])
        #expect(t == 60)
    }

    @Test("no pause left after the burst: no cycle (scan all the time)", arguments: [(5.0, 5.0), (5.0, 0.0), (0.0, 30.0), (10.0, 3.0)])
    func noCycle(burst: Double, period: Double) {
        #expect(ScanCycle(burst: burst, period: period) == nil)
    }
}
