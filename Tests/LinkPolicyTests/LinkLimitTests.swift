// SPDX-License-Identifier: MIT
import LinkPolicy
import Testing

func reserve(_ l: inout LinkLimit) -> Bool { l.reserve() }
func refuse(_ l: inout LinkLimit, device: String, couldBeCapacity: Bool, now: Double) -> LinkLimit.Verdict {
    l.refused(device: device, couldBeCapacity: couldBeCapacity, now: now)
}
func probe(_ l: inout LinkLimit, now: Double, demand: Bool) -> Bool { l.probe(now: now, demand: demand) }
func link(_ l: inout LinkLimit, now: Double) -> Int? { l.linked(now: now) }

@Suite("Link limits learned per adapter")
struct LinkLimitTests {
    /// Links `n` straps in a row.
    func fill(_ l: inout LinkLimit, _ n: Int, now: Double = 0) {
        for _ in 0..<n {
            #expect(reserve(&l))
            l.linked(now: now)
        }
    }

    @Test("refusals from two straps at the most links ever held make that the limit")
    func learnsDown() {
        var l = LinkLimit(ceiling: 32)
        fill(&l, 4)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "A", couldBeCapacity: true, now: 1) == .suspect)
        #expect(l.limit == 32, "one refusal proves nothing")
        #expect(reserve(&l))
        #expect(refuse(&l, device: "B", couldBeCapacity: true, now: 2) == .learned(4))
        #expect(l.limit == 4)
        #expect(l.learned == 4)
        #expect(!reserve(&l), "full at the learned limit")
    }

    @Test("one strap refused over and over never caps the adapter (it may be out of range or broken): it backs off instead")
    func sameDevice() {
        var l = LinkLimit(ceiling: 10)
        fill(&l, 3)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "A", couldBeCapacity: true, now: 0) == .suspect)
        for i in 1..<10 {
            #expect(reserve(&l))
            #expect(refuse(&l, device: "A", couldBeCapacity: true, now: Double(i)) == .repeated)
        }
        #expect(l.limit == 10)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "B", couldBeCapacity: true, now: 11) == .learned(3), "a second strap refused at the same count")
    }

    @Test("failures with no link held, or of other kinds, say nothing about capacity")
    func notCapacity() {
        var l = LinkLimit(ceiling: 8)
        for i in 0..<10 {
            #expect(reserve(&l))
            #expect(refuse(&l, device: "D\(i)", couldBeCapacity: true, now: 0) == .notCapacity)
        }
        fill(&l, 2)
        for i in 0..<10 {
            #expect(reserve(&l))
            #expect(refuse(&l, device: "E\(i)", couldBeCapacity: false, now: 0) == .notCapacity)
        }
        #expect(l.limit == 8)
    }

    @Test("radio noise between successes at the same count never lowers the limit")
    func noise() {
        var l = LinkLimit(ceiling: 7)
        fill(&l, 2)
        for i in 0..<20 {
            #expect(reserve(&l))
            _ = l.refused(device: "N\(i)", couldBeCapacity: true, now: 0)
            #expect(reserve(&l))
            l.linked(now: 0)
            l.unlinked()
        }
        #expect(l.limit == 7)
        #expect(l.learned == nil)
    }

    @Test("below the most ever held it takes more refusals to believe the adapter shrank")
    func shrinks() {
        var l = LinkLimit(ceiling: 10)
        fill(&l, 6)
        for _ in 0..<3 { l.unlinked() }
        #expect(reserve(&l))
        #expect(refuse(&l, device: "A", couldBeCapacity: true, now: 0) == .notCapacity)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "A", couldBeCapacity: true, now: 0) == .repeated)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "B", couldBeCapacity: true, now: 0) == .notCapacity)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "C", couldBeCapacity: true, now: 0) == .learned(3))
    }

    @Test("probes one above the limit when straps wait and it was stable; a failed probe waits twice as long")
    func probes() {
        let settings = LinkLimit.Settings(probeAfter: 60, probeCap: 200)
        var l = LinkLimit(ceiling: 6, remembered: 4, settings: settings, now: 0)
        #expect(l.limit == 4)
        fill(&l, 4)
        #expect(!probe(&l, now: 30, demand: true), "too soon")
        #expect(!probe(&l, now: 61, demand: false), "nobody waits")
        #expect(probe(&l, now: 61, demand: true))
        #expect(l.limit == 5)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "A", couldBeCapacity: true, now: 62) == .suspect)
        #expect(reserve(&l))
        #expect(refuse(&l, device: "B", couldBeCapacity: true, now: 63) == .learned(4))
        #expect(!probe(&l, now: 63 + 100, demand: true), "a failed probe doubles the wait")
        #expect(probe(&l, now: 63 + 121, demand: true))
        #expect(reserve(&l))
        #expect(link(&l, now: 190) == 5, "the probe linked: the limit is raised")
        #expect(l.learned == 5)
        #expect(probe(&l, now: 251, demand: true))
        #expect(l.limit == 6)
        #expect(l.nextProbe(now: 252) == nil, "at the ceiling")
    }

    @Test("the configured maximum bounds what is remembered and what is probed")
    func ceiling() {
        let l = LinkLimit(ceiling: 3, remembered: 9)
        #expect(l.limit == 3)
        #expect(LinkLimit(ceiling: 0).limit == 1)
        var m = LinkLimit(ceiling: 3, remembered: 3, settings: LinkLimit.Settings(probeAfter: 1))
        fill(&m, 3)
        #expect(!probe(&m, now: 100, demand: true))
    }
}

@Suite("Who gets a link")
struct LinkPlannerTests {
    typealias C = LinkPlanner.Candidate
    let plain = LinkPlanner.Standing()
    let advert = LinkPlanner.Standing(heardByAdvertisement: true)
    let paired = LinkPlanner.Standing(paired: true)

    @Test("straps that cannot be heard otherwise, then paired, then priority, then waiting time")
    func order() {
        let reach = [LinkPlanner.Reach(adapter: "hci0")]
        let waiting = [
            C(address: "ADV", standing: LinkPlanner.Standing(heardByAdvertisement: true, paired: true, rank: 0), waitingSince: 0, reach: reach),
            C(address: "OLD", standing: plain, waitingSince: 1, reach: reach),
            C(address: "NEW", standing: plain, waitingSince: 5, reach: reach),
            C(address: "RANK1", standing: LinkPlanner.Standing(rank: 1), waitingSince: 9, reach: reach),
            C(address: "RANK0", standing: LinkPlanner.Standing(rank: 0), waitingSince: 9, reach: reach),
            C(address: "PAIRED", standing: paired, waitingSince: 9, reach: reach),
            C(address: "DROPPED", standing: plain, justDropped: true, waitingSince: 9, reach: reach),
        ]
        let sorted = waiting.sorted(by: LinkPlanner.goesBefore).map(\.address)
        #expect(sorted == ["PAIRED", "RANK0", "RANK1", "DROPPED", "OLD", "NEW", "ADV"])
        let plan = LinkPlanner.plan(waiting: waiting, free: ["hci0": 3], links: [])
        #expect(Set(plan.grants.keys) == ["PAIRED", "RANK0", "RANK1"])
    }

    @Test("the adapter with most room, then the stronger signal")
    func placement() {
        let w = [
            C(address: "A", standing: plain, waitingSince: 0, reach: [.init(adapter: "hci0", rssi: -40), .init(adapter: "hci1", rssi: -80)]),
            C(address: "B", standing: plain, waitingSince: 1, reach: [.init(adapter: "hci0", rssi: -80), .init(adapter: "hci1", rssi: -40)]),
            C(address: "C", standing: plain, waitingSince: 2, reach: [.init(adapter: "hci0", rssi: -40)]),
        ]
        let plan = LinkPlanner.plan(waiting: w, free: ["hci0": 1, "hci1": 3], links: [])
        #expect(plan.grants["A"] == "hci1", "most room wins over signal")
        #expect(plan.grants["B"] == "hci1")
        #expect(plan.grants["C"] == "hci0")
        let even = LinkPlanner.plan(waiting: [w[0]], free: ["hci0": 2, "hci1": 2], links: [])
        #expect(even.grants["A"] == "hci0", "equal room: the stronger signal")
    }

    @Test("a linked strap heard by advertisement gives its link to one that cannot be heard otherwise")
    func yields() {
        let reach = [LinkPlanner.Reach(adapter: "hci0")]
        let links = [
            LinkPlanner.Link(address: "L1", adapter: "hci0", standing: plain),
            LinkPlanner.Link(address: "ADV-PAIRED", adapter: "hci0", standing: LinkPlanner.Standing(heardByAdvertisement: true, paired: true)),
            LinkPlanner.Link(address: "ADV", adapter: "hci0", standing: advert),
        ]
        let waiting = [
            C(address: "W1", standing: plain, waitingSince: 0, reach: reach),
            C(address: "W2", standing: plain, waitingSince: 1, reach: reach),
            C(address: "W3", standing: plain, waitingSince: 2, reach: reach),
            C(address: "WADV", standing: advert, waitingSince: 0, reach: reach),
        ]
        let plan = LinkPlanner.plan(waiting: waiting, free: ["hci0": 0], links: links)
        #expect(plan.grants.isEmpty)
        #expect(plan.yields == ["ADV": "W1", "ADV-PAIRED": "W2"], "the unpaired one first; never a strap that cannot be heard otherwise")
        let again = LinkPlanner.plan(waiting: waiting, free: ["hci0": 0], links: links, yielding: ["ADV"])
        #expect(again.yields == ["ADV-PAIRED": "W2"], "a link already giving way is not asked twice")
        let elsewhere = LinkPlanner.plan(waiting: [C(address: "W", standing: plain, waitingSince: 0, reach: [.init(adapter: "hci1")])],
                                         free: ["hci0": 0, "hci1": 0], links: links)
        #expect(elsewhere.yields.isEmpty, "only links on an adapter the waiting strap can reach")
        let queued = LinkPlanner.plan(waiting: waiting, free: ["hci0": 0], full: [], links: links)
        #expect(queued.yields.isEmpty, "an adapter with room and its connects queued is not full: nobody gives way")
    }
}
