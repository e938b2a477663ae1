import BlegateTestSupport
import DBus
import Synchronization
import Testing
import Timing

@Suite("Signals")
struct SignalTests {
    @Test("a signal carries the time it was read off the bus, not the time its consumer got to it")
    func arrivalTime() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let rule = DBusMatchRule(sender: t.server.uniqueName, interface: "org.blegate.Test1", member: "Beat", path: "/test")
        let stream = try await t.client.signals(matching: rule)
        let raw = Mutex<[Int64]>([])
        let sub = try await t.client.subscribeRaw(matching: rule) { view in raw.withLock { $0.append(view.receivedAt) } }
        defer { t.client.unsubscribe(sub) }
        let sent = WallClock.milliseconds()
        try t.server.emit(path: "/test", interface: "org.blegate.Test1", member: "Beat", [.uint32(1)])
        // The consumer is busy for a second before it reads the signal.
        try await Task.sleep(for: .seconds(1))
        let signal = try await nextSignal(stream, "the beat")
        let read = WallClock.milliseconds()
        let stamp = try #require(signal.receivedAt)
        #expect(stamp >= sent - 5 && stamp - sent < 500, "stamped \(stamp - sent) ms after sending")
        #expect(read - stamp >= 900, "the consumer read it \(read - stamp) ms after it arrived")
        #expect(raw.withLock { $0 } == [stamp], "the raw handler sees the same time")
    }

    @Test("100,000 signals arrive in order, none lost, while method calls keep answering")
    func hundredThousand() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Ping", out: [DBusArgument("n", "u")]) { _ in [.uint32(1)] },
        ])])
        let total = 100_000
        let stream = try await t.client.signals(
            matching: DBusMatchRule(sender: t.server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: "/test/char"),
            bufferSize: total)
        let serverConnection = t.server
        let emitter = Task {
            for i in 0..<total {
                let payload: [UInt8] = [0x10, UInt8(truncatingIfNeeded: i), UInt8(truncatingIfNeeded: i >> 8), UInt8(truncatingIfNeeded: i >> 16)]
                try serverConnection.emit(path: "/test/char", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                          [.string("org.bluez.GattCharacteristic1"), .properties([("Value", .bytes(payload))]), .strings([])])
                if i % 1000 == 0 { await Task.yield() }
            }
        }
        let client = t.client
        let dest = t.server.uniqueName
        let received = Atomic<Int>(0)
        let pinger = Task {
            var answered = 0
            var answeredDuringStream = 0
            while received.load(ordering: .relaxed) < total && !Task.isCancelled {
                let r = try await client.call(destination: dest, path: "/test", interface: "org.blegate.Test1", member: "Ping", timeout: .seconds(30))
                #expect(r == [.uint32(1)])
                answered += 1
                if received.load(ordering: .relaxed) < total { answeredDuringStream += 1 }
            }
            return (answered, answeredDuringStream)
        }
        let inOrder = try await withTimeout(120, "100,000 signals") {
            var expected = 0
            var ordered = true
            for await signal in stream {
                guard signal.body.count == 3, let props = signal.body[1].stringKeyedValue, let bytes = props["Value"]?.bytesValue, bytes.count == 4 else {
                    ordered = false
                    break
                }
                let n = Int(bytes[1]) | Int(bytes[2]) << 8 | Int(bytes[3]) << 16
                if n != expected { ordered = false }
                expected += 1
                received.store(expected, ordering: .relaxed)
                if expected == total { break }
            }
            return ordered && expected == total
        }
        try await emitter.value
        let (answered, during) = try await pinger.value
        #expect(inOrder)
        #expect(stream.dropped == 0)
        #expect(answered > 0)
        #expect(during > 0)
        #expect(t.client.statistics.signalsDropped == 0)
    }

    @Test("a subscriber that never reads does not delay replies or other subscribers; its drops are counted")
    func slowSubscriber() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Ping", out: [DBusArgument("n", "u")]) { _ in [.uint32(7)] },
        ])])
        let rule = DBusMatchRule(sender: t.server.uniqueName, interface: "org.blegate.Test1", member: "Tick")
        let slow = try await t.client.signals(matching: rule, bufferSize: 8)
        let fast = try await t.client.signals(matching: rule, bufferSize: 100_000)
        let total = 20_000
        for i in 0..<total {
            try t.server.emit(path: "/test", interface: "org.blegate.Test1", member: "Tick", [.uint32(UInt32(i))])
        }
        // The slow subscriber holds its buffer and never reads; the fast one gets everything in order.
        let all = try await withTimeout(60, "fast subscriber") {
            var n: UInt32 = 0
            for await s in fast {
                guard s.body.first == .uint32(n) else { return false }
                n += 1
                if n == UInt32(total) { return true }
            }
            return false
        }
        #expect(all)
        // A method call still answers while the slow subscriber has not consumed anything.
        let reply = try await withTimeout(30, "reply with a stalled subscriber") {
            try await t.client.call(destination: t.server.uniqueName, path: "/test", interface: "org.blegate.Test1", member: "Ping")
        }
        #expect(reply == [.uint32(7)])
        #expect(slow.delivered == 8)
        #expect(slow.dropped == total - 8)
        #expect(t.client.statistics.signalsDropped == total - 8)
        // What the slow one buffered is the oldest, in order.
        var firstEight: [DBusValue] = []
        for await s in slow {
            firstEight.append(s.body[0])
            if firstEight.count == 8 { break }
        }
        #expect(firstEight == (0..<8).map { .uint32(UInt32($0)) })
    }

    @Test("match rules route by path namespace, arguments and sender; quoting survives apostrophes")
    func matchRules() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        #expect(DBusMatchRule.quote("it's") == "'it'\\''s'")
        let rule = DBusMatchRule(sender: t.server.uniqueName, interface: "org.blegate.Test1", member: "Named",
                                 pathNamespace: "/org/bluez/hci0", arguments: [0: "it's here"])
        #expect(rule.ruleString == "type='signal',sender='\(t.server.uniqueName!)',interface='org.blegate.Test1',member='Named',path_namespace='/org/bluez/hci0',arg0='it'\\''s here'")
        let stream = try await t.client.signals(matching: rule)
        let others = try await t.client.signals(matching: DBusMatchRule(interface: "org.blegate.Test1", member: "Named", path: "/elsewhere"))
        try t.server.emit(path: "/org/bluez/hci1", interface: "org.blegate.Test1", member: "Named", [.string("it's here")])  // wrong namespace
        try t.server.emit(path: "/org/bluez/hci0/dev_1", interface: "org.blegate.Test1", member: "Named", [.string("other")])  // wrong arg0
        try t.server.emit(path: "/elsewhere", interface: "org.blegate.Test1", member: "Named", [.string("it's here")])
        try t.server.emit(path: "/org/bluez/hci0/dev_1", interface: "org.blegate.Test1", member: "Named", [.string("it's here"), .int32(1)])
        let got = try await nextSignal(stream, "matching signal")
        #expect(got.path == "/org/bluez/hci0/dev_1")
        #expect(got.body.last == .int32(1))
        let other = try await nextSignal(others, "other subscriber")
        #expect(other.path == "/elsewhere")
        // Only one signal reached the first subscriber: the next one it sees is a marker sent later.
        try t.server.emit(path: "/org/bluez/hci0", interface: "org.blegate.Test1", member: "Named", [.string("it's here"), .int32(2)])
        let next = try await nextSignal(stream, "marker")
        #expect(next.body.last == .int32(2))
    }

    @Test("name-owner tracking shows a service leaving and coming back with a new owner")
    func nameOwner() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let changes = try await t.client.nameOwnerChanges(of: "org.bluez")
        let owners = Mutex<[String?]>([])
        let watcher = Task {
            for await owner in changes {
                let count = owners.withLock { $0.append(owner); return $0.count }
                if count == 4 { return }
            }
        }
        // Subscribe to signals by well-known sender: routing must follow the new owner.
        let byName = try await t.client.signals(matching: DBusMatchRule(sender: "org.bluez", interface: "org.blegate.Test1", member: "Hello"))
        #expect(try await t.server.requestName("org.bluez") == .primaryOwner)
        try await t.server.releaseName("org.bluez")
        let second = try await DBusConnection.connect(t.bus.busAddress)
        defer { second.close() }
        #expect(try await second.requestName("org.bluez") == .primaryOwner)
        try second.emit(path: "/", interface: "org.blegate.Test1", member: "Hello", [.string("from the new owner")])
        let hello = try await nextSignal(byName, "signal from new owner")
        #expect(hello.sender == second.uniqueName)
        _ = try await withTimeout(30, "owner changes") { await watcher.value }
        let seen = owners.withLock { $0 }
        #expect(seen == [nil, t.server.uniqueName, nil, second.uniqueName])
    }
}

@Suite("Dispatcher-thread handlers")
struct HandlerSubscriptionTests {
    @Test("raw and decoded handlers see every signal in order; withChangedBytes reads the Value in place")
    func handlers() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let path: DBusObjectPath = "/org/bluez/hci0/dev_AA/service000c/char000d"
        let rule = DBusMatchRule(sender: t.server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path)
        let rawSeen = Mutex<[[UInt8]]>([])
        let decodedSeen = Mutex<[[UInt8]]>([])
        let rawSub = try await t.client.subscribeRaw(matching: rule) { view in
            #expect(view.hasPath(path))
            if let bytes = view.withChangedBytes("Value", { Array($0) }) {
                rawSeen.withLock { $0.append(bytes) }
            }
            #expect(view.withChangedBytes("Missing", { _ in 1 }) == nil)
        }
        let decodedSub = try await t.client.subscribe(matching: rule) { signal in
            if let bytes = signal.body[1].stringKeyedValue?["Value"]?.bytesValue { decodedSeen.withLock { $0.append(bytes) } }
        }
        let server = DBusObjectServer(connection: t.server)
        try server.add(path, [DBusInterface("org.bluez.GattCharacteristic1", properties: [DBusProperty("Value", "ay", value: .bytes([]))])])
        let payloads: [[UInt8]] = (0..<500).map { [0x16, UInt8($0 % 200), UInt8($0 >> 8), 0x03] } + [[]]
        for p in payloads {
            server.setProperties(path, "org.bluez.GattCharacteristic1", [("Value", .bytes(p))], force: true)
        }
        _ = try await withTimeout(30, "all handler deliveries") {
            while rawSeen.withLock({ $0.count }) < payloads.count || decodedSeen.withLock({ $0.count }) < payloads.count {
                try await Task.sleep(for: .milliseconds(10))
            }
            return true
        }
        #expect(rawSeen.withLock { $0 } == payloads)
        #expect(decodedSeen.withLock { $0 } == payloads)
        #expect(rawSub.delivered == payloads.count)
        t.client.unsubscribe(rawSub)
        t.client.unsubscribe(decodedSub)
    }
}

@Suite("Reading signals in place")
struct SignalViewTests {
    @Test("changes(only:) tells a bare Value from one batched with other changes")
    func changesOnly() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let path: DBusObjectPath = "/org/bluez/hci0/dev_AA/service000c/char000d"
        let seen = Mutex<[Bool]>([])
        _ = try await t.client.subscribeRaw(matching: DBusMatchRule(sender: t.server.uniqueName, member: "PropertiesChanged", path: path)) { view in
            let only = view.changes(only: "Value")
            seen.withLock { $0.append(only) }
        }
        let iface = "org.freedesktop.DBus.Properties"
        let bodies: [[DBusValue]] = [
            [.string("org.bluez.GattCharacteristic1"), .properties([("Value", .bytes([6, 72]))]), .strings([])],
            [.string("org.bluez.GattCharacteristic1"), .properties([("Value", .bytes([6, 72])), ("Notifying", .bool(false))]), .strings([])],
            [.string("org.bluez.GattCharacteristic1"), .properties([("Notifying", .bool(true))]), .strings([])],
            [.string("org.bluez.GattCharacteristic1"), .properties([("Value", .bytes([]))]), .strings(["MTU"])],
            [.string("org.bluez.GattCharacteristic1"), .properties([]), .strings([])],
        ]
        for body in bodies { try t.server.emit(path: path, interface: iface, member: "PropertiesChanged", body) }
        _ = try await withTimeout(30, "five signals") {
            while seen.withLock({ $0.count }) < bodies.count { try await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        #expect(seen.withLock { $0 } == [true, false, false, false, false])
    }
}
