// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Synchronization
import Testing
import Timing

/// A connection that gathers signals reads dense ones in few wake-ups, loses none, and
/// never holds a reply or a served call for its window.
@Suite("Signal gathering")
struct SignalGatherTests {
    static func rule(_ t: TestBus) -> DBusMatchRule {
        DBusMatchRule(sender: t.server.uniqueName, interface: "org.blegate.Test1", member: "Beat", path: "/test")
    }

    /// Emits `count` Beat signals numbered from 0, `every` apart.
    static func emitBeats(_ t: TestBus, count: Int, every: Duration) async throws {
        for i in 0..<count {
            try t.server.emit(path: "/test", interface: "org.blegate.Test1", member: "Beat", [.uint32(UInt32(i))])
            try await Task.sleep(for: every)
        }
    }

    @Test("dense signals are read a window at a time, every one of them, in order")
    func denseSignalsGather() async throws {
        let window = 1.0
        let t = try await TestBus.start(gatherSignals: .seconds(window))
        defer { t.stop() }
        let seen = Mutex<[(n: UInt32, readAt: Int64)]>([])
        let sub = try await t.client.subscribeRaw(matching: Self.rule(t)) { view in
            guard case .uint32(let n)? = view.decoded().body.first else { return }
            seen.withLock { $0.append((n, view.receivedAt)) }
        }
        defer { t.client.unsubscribe(sub) }
        // 50 a second: a window brings fewer than `burstMessages`, so it stays whole.
        let count = 200
        let began = MonotonicClock.seconds()
        try await Self.emitBeats(t, count: count, every: .milliseconds(20))
        let emitting = MonotonicClock.seconds() - began
        try await eventually("all \(count) beats read", seconds: 30) { seen.withLock { $0.count } >= count }
        let all = seen.withLock { $0 }
        #expect(all.map(\.n) == (0..<UInt32(count)).map { $0 }, "every beat, in order")
        // Read one by one, 200 beats 20 ms apart take about 200 reads; gathered, about one
        // read per window over the time they took to send (a loaded machine stretches it).
        let reads = Set(all.map(\.readAt)).count
        #expect(reads <= Int(emitting / window) + 10, "\(reads) distinct read times for \(count) beats sent over \(emitting) s")
    }

    @Test("a flood shortens the window, every signal is read in order, and the window comes back when the flood ends")
    func floodShortensTheWindow() async throws {
        let limit = Duration.milliseconds(500)
        let t = try await TestBus.start(gatherSignals: limit)
        defer { t.stop() }
        let seen = Mutex<[UInt32]>([])
        let sub = try await t.client.subscribeRaw(matching: Self.rule(t)) { view in
            guard case .uint32(let n)? = view.decoded().body.first else { return }
            seen.withLock { $0.append(n) }
        }
        defer { t.client.unsubscribe(sub) }
        // Dense traffic first, so that the dispatcher gathers at all.
        try await Self.emitBeats(t, count: 20, every: .milliseconds(50))
        #expect(t.client.signalGatherNow == limit)
        // Then 20 ms of beats at a time, 150 each (a socket holds about 170 of them),
        // every 100 ms: a whole window would bring several socketfuls.
        var next: UInt32 = 20
        var shortest = limit
        for _ in 0..<20 {
            for _ in 0..<150 {
                try t.server.emit(path: "/test", interface: "org.blegate.Test1", member: "Beat", [.uint32(next)])
                next += 1
            }
            try await Task.sleep(for: .milliseconds(100))
            shortest = min(shortest, t.client.signalGatherNow)
        }
        let total = Int(next)
        try await eventually("all \(total) beats read", seconds: 60) { seen.withLock { $0.count } >= total }
        #expect(seen.withLock { $0 } == (0..<next).map { $0 }, "every beat, in order")
        #expect(shortest <= limit / 4, "the window while flooded: \(shortest)")
        // Sparse again (a few a window): the window doubles back to the limit.
        try await Self.emitBeats(t, count: 60, every: .milliseconds(50))
        try await eventually("the window back at \(limit)", seconds: 30) {
            try await Self.emitBeats(t, count: 5, every: .milliseconds(50))
            return t.client.signalGatherNow == limit
        }
    }

    @Test("a reply is read at once while signals gather")
    func repliesAreNotGathered() async throws {
        let t = try await TestBus.start(gatherSignals: .seconds(5))
        defer { t.stop() }
        // The gathering client calls the server.
        try await Self.pingsAnswerAtOnce(t, server: t.server, caller: t.client)
    }

    @Test("a connection that serves method calls never gathers")
    func servedCallsAreNotGathered() async throws {
        let t = try await TestBus.start(gatherSignals: .seconds(5))
        defer { t.stop() }
        // The gathering client is called.
        try await Self.pingsAnswerAtOnce(t, server: t.client, caller: t.server)
    }

    /// While beats stream densely to the gathering client, three Pings from `caller` to
    /// an object `server` serves each answer well within the 5 s window.
    static func pingsAnswerAtOnce(_ t: TestBus, server: DBusConnection, caller: DBusConnection) async throws {
        let objects = DBusObjectServer(connection: server)
        try objects.add("/pinged", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Ping", out: [DBusArgument("n", "u")]) { _ in [.uint32(7)] },
        ])])
        let beats = Atomic<Int>(0)
        let sub = try await t.client.subscribeRaw(matching: Self.rule(t)) { _ in beats.add(1, ordering: .relaxed) }
        defer { t.client.unsubscribe(sub) }
        let emitter = Task { try await Self.emitBeats(t, count: 400, every: .milliseconds(20)) }
        defer { emitter.cancel() }
        // Dense traffic under way: the client gathers what it may.
        try await eventually("beats arriving", seconds: 30) { beats.load(ordering: .relaxed) >= 20 }
        for _ in 0..<3 {
            let began = MonotonicClock.seconds()
            let answer = try await caller.call(destination: server.uniqueName, path: "/pinged", interface: "org.blegate.Test1",
                                               member: "Ping", timeout: .seconds(30))
            let took = MonotonicClock.seconds() - began
            #expect(answer == [.uint32(7)])
            // Held for the window, it would take up to 5 s.
            #expect(took < 2.5, "the call took \(took) s")
        }
    }
}
