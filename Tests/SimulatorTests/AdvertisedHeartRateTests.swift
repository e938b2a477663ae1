import BlegateTestSupport
import DBus
import Simulator
import Testing

/// Polar's heart-rate block as a scanner reads it (decoded here on its own, so the
/// test does not lean on the simulator's encoder).
struct PolarBlock: Equatable, CustomStringConvertible {
    var contact: Bool
    var counter: UInt8
    var fast: UInt8
    var slow: UInt8

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 4, bytes[0] & 0x40 == 0 else { return nil }
        contact = bytes[0] & 0x02 != 0
        counter = (bytes[0] >> 2) & 0x07
        fast = bytes[2]
        slow = bytes[3]
    }

    var description: String { "contact=\(contact) counter=\(counter) hr=\(slow)/\(fast)" }
}

/// The company 0x006B bytes of a Device1 PropertiesChanged that carries ManufacturerData.
func polarBytes(_ s: DBusSignal) -> [UInt8]? {
    guard s.body.count >= 2, s.body[0].stringValue == "org.bluez.Device1",
          let entries = s.body[1].stringKeyedValue?["ManufacturerData"]?.dictionaryEntries else { return nil }
    return entries.first { $0.key == .uint16(0x006B) }?.value.bytesValue
}

@Suite("Heart rate in advertisements")
struct AdvertisedHeartRateTests {
    static let device = "org.bluez.Device1"

    func propertyChanges(_ h: SimHarness) async throws -> DBusSignalStream {
        try await h.client.signals(matching: DBusMatchRule(
            sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged"), bufferSize: 4096)
    }

    @Test("A broadcast-only strap: live heart rate heard on every discovering adapter, one log line per value, one due every second; Connect times out")
    func broadcastOnly() async throws {
        try await withSimulator({ $0.straps = 3; $0.advertising = 2; $0.advertisingOnly = 1; $0.adapters = 2; $0.connectTimeout = 1 }) { h in
            let strap = try #require(h.sim.devices.first { $0.model == .polarBroadcast })
            let adapters: [DBusObjectPath] = ["/org/bluez/hci0", "/org/bluez/hci1"]
            let paths = adapters.map { $0.appending(strap.objectName) }
            let changes = try await propertyChanges(h)
            for a in adapters { _ = try await h.call(a, "org.bluez.Adapter1", "StartDiscovery") }

            let got = try await collect(changes, 8, "ManufacturerData changes of \(strap.name)") { s in
                s.path.map(paths.contains) == true && polarBytes(s) != nil
            }
            let logged = h.sim.payloadLog.adverts(address: strap.address)
            for path in paths {
                let blocks = got.filter { $0.path == path }.compactMap(polarBytes)
                #expect(blocks.count >= 2, "only \(blocks.count) changes on \(path)")
                let decoded = blocks.compactMap(PolarBlock.init)
                #expect(decoded.count == blocks.count)
                #expect(decoded.allSatisfy { $0.contact && (40...200).contains($0.slow) && (40...220).contains($0.fast) }, "\(decoded)")
                // Each change is a new measurement: the counter moves on. A scanner that falls
                // behind (a loaded machine) hears the latest value, as a radio would, so it
                // may skip one; the log below holds every value.
                for (a, b) in zip(decoded, decoded.dropFirst()) { #expect((1...3).contains((b.counter &- a.counter) & 7), "\(a) → \(b)") }
                // What the bus carried is what the log says was advertised.
                for bytes in blocks { #expect(logged.contains { $0.bytes == bytes }, "\(bytes) not in the log") }
            }
            // One line per value, however many adapters heard it.
            for (a, b) in zip(logged, logged.dropFirst()) { #expect(b.counter == (a.counter + 1) % 8) }
            for record in logged {
                let block = PolarBlock(record.bytes)
                #expect(block.map { Int($0.slow) == record.heartRate && Int($0.counter) == record.counter } == true, "\(record)")
            }

            let uuids = try await h.get(paths[0], Self.device, "UUIDs").stringArrayValue ?? []
            #expect(!uuids.contains(bluetoothUUID(0x180D)) && !uuids.isEmpty, "\(uuids)")

            // Nobody answers a connection request: the kernel gives up after its timeout.
            let clock = ContinuousClock()
            let start = clock.now
            await expectError("org.bluez.Error.Failed", message: "le-connection-abort-by-local") {
                _ = try await h.call(paths[0], Self.device, "Connect")
            }
            #expect(clock.now - start >= .seconds(1))
            #expect(try await h.get(paths[0], Self.device, "Connected") == .bool(false))

            // A new value is due every second. Whether the machine ran the scan tick on
            // time is not the strap's doing, so the schedule is judged, not the clock: each
            // value is due a period after the one before, or (after a stall past a whole
            // period) restarts at the tick that renewed it; never early, never a burst.
            try await eventually("8 advertised values", seconds: 40) {
                h.sim.payloadLog.adverts(address: strap.address).count >= 8
            }
            let all = h.sim.payloadLog.adverts(address: strap.address)
            for (a, b) in zip(all, all.dropFirst()) {
                let onSchedule = b.dueMilliseconds == a.dueMilliseconds + 1000
                let restarted = b.dueMilliseconds == b.monotonicMilliseconds && b.monotonicMilliseconds - a.dueMilliseconds >= 2000
                #expect(onSchedule || restarted, "due \(a.dueMilliseconds) → \(b.dueMilliseconds), sent at \(b.monotonicMilliseconds)")
                #expect(b.monotonicMilliseconds >= b.dueMilliseconds)
            }
        }
    }

    @Test("An H10 keeps advertising while connected, its advertised rate agrees with its notifications; SetWorn(false) freezes it")
    func connectedAndWorn() async throws {
        try await withSimulator({ $0.straps = 3; $0.advertising = 2 }) { h in
            let strap = try #require(h.sim.devices.first { $0.model == .polarH10 })
            let path = SimHarness.adapter.appending(strap.objectName)
            let changes = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: path), bufferSize: 4096)
            // With a filter every report carries the RSSI: a clock the test can wait on.
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
            _ = try await h.discover(count: 3)
            try await h.connect(path)
            let hrm = try await h.characteristic(path, 0x2A37)
            _ = try await h.call(hrm, SimHarness.chr, "StartNotify")
            try await eventually("notifications") { !h.sim.payloadLog.records(address: strap.address).isEmpty }
            let firstNotified = h.sim.payloadLog.records(address: strap.address)[0].monotonicMilliseconds

            // Advertised values while connected and notifying, on the bus and in the log.
            let whileConnected = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: path), bufferSize: 4096)
            let live = try await collect(whileConnected, 3, "ManufacturerData changes while connected") { polarBytes($0) != nil }
            #expect(try await h.get(path, Self.device, "Connected") == .bool(true))
            let liveBlocks = live.compactMap(polarBytes).compactMap(PolarBlock.init)
            #expect(liveBlocks.count == 3 && liveBlocks.allSatisfy { $0.contact }, "\(liveBlocks)")
            let adverts = h.sim.payloadLog.adverts(address: strap.address).filter { $0.monotonicMilliseconds > firstNotified + 100 }
            #expect(adverts.count >= 2)
            let notified = h.sim.payloadLog.records(address: strap.address).filter { $0.uuid == bluetoothUUID(0x2A37) }
            for advert in adverts {
                // The H10 sends uint8 heart rate: byte 1.
                let last = try #require(notified.last { $0.monotonicMilliseconds <= advert.monotonicMilliseconds })
                #expect(abs(Int(last.bytes[1]) - advert.heartRate) <= 3, "advert \(advert.heartRate), notified \(last.bytes[1])")
            }

            // On a hook: contact cleared, rate 0, counter frozen, no notifications.
            let lastCounter = try #require(h.sim.payloadLog.adverts(address: strap.address).last).counter
            #expect(try await h.control("SetWorn", [.string(strap.address), .bool(false)]) == [.uint32(1)])
            let sentWhenTakenOff = h.sim.payloadLog.records(address: strap.address).count
            let off = try await collect(changes, 1, "an advertisement without contact") { s in
                polarBytes(s).flatMap(PolarBlock.init).map { !$0.contact } ?? false
            }
            let offBlock = try #require(polarBytes(off[0]).flatMap(PolarBlock.init))
            #expect(offBlock.slow == 0 && offBlock.fast == 0)
            #expect(Int(offBlock.counter) == lastCounter || Int(offBlock.counter) == (lastCounter + 1) % 8)
            let later = try await collect(changes, 3, "three more reports") { s in
                s.body.count >= 2 && (s.body[1].stringKeyedValue?["RSSI"] != nil || polarBytes(s) != nil)
            }
            #expect(later.allSatisfy { polarBytes($0) == nil }, "the advertisement changed while off the skin")
            #expect(h.sim.payloadLog.records(address: strap.address).count == sentWhenTakenOff)

            // Back on: new values and notifications again.
            #expect(try await h.control("SetWorn", [.string(strap.address), .bool(true)]) == [.uint32(1)])
            let on = try await collect(changes, 2, "advertisements with contact again") { s in
                polarBytes(s).flatMap(PolarBlock.init)?.contact ?? false
            }.compactMap(polarBytes).compactMap(PolarBlock.init)
            #expect(on[0].counter == (offBlock.counter + 1) & 7 && on[1].counter == (on[0].counter + 1) & 7, "\(offBlock) → \(on)")
            try await eventually("notifications again") { h.sim.payloadLog.records(address: strap.address).count > sentWhenTakenOff }
        }
    }

    @Test("A class of 80: every strap discovered, exactly the 40 advertisers show a Polar block, the 10 broadcast-only without 180D")
    func classOf80() async throws {
        try await withSimulator({ $0.straps = 80; $0.advertising = 40; $0.advertisingOnly = 10 }) { h in
            _ = try await h.discover(count: 80)
            let objects = try await h.managedObjects()
            let devices = objects.values.compactMap { $0[Self.device] }
            #expect(devices.count == 80)
            let polar = devices.filter { d in d["ManufacturerData"]?.dictionaryEntries?.contains { $0.key == .uint16(0x006B) } == true }
            #expect(polar.count == 40)
            let heartRateService = bluetoothUUID(0x180D)
            let unconnectable = devices.filter { !($0["UUIDs"]?.stringArrayValue ?? []).contains(heartRateService) }
            #expect(unconnectable.count == 10)
            #expect(unconnectable.allSatisfy { $0["Name"]?.stringValue?.hasPrefix("Polar H9 ") == true })
        }
    }

    @Test("Without --advertising an H10 shows its catalog block until it notifies, then the notified rate")
    func classicH10() async throws {
        try await withSimulator({ $0.straps = 1 }) { h in
            let strap = try #require(h.sim.devices.first)
            #expect(strap.model == .polarH10)
            let path = try await h.discover(count: 1)[0]
            let changes = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: path), bufferSize: 4096)
            let shown = try await h.get(path, Self.device, "ManufacturerData").dictionaryEntries?.first?.value.bytesValue
            #expect(shown == strap.manufacturerData[0x006B])
            #expect(h.sim.payloadLog.adverts().isEmpty)
            try await h.connect(path)
            _ = try await h.call(try await h.characteristic(path, 0x2A37), SimHarness.chr, "StartNotify")
            let live = try await collect(changes, 2, "live ManufacturerData") { polarBytes($0) != nil }.compactMap(polarBytes)
            let logged = h.sim.payloadLog.adverts(address: strap.address)
            #expect(live.allSatisfy { bytes in logged.contains { $0.bytes == bytes } })
            #expect(PolarBlock(live[0])?.counter == 2)
        }
    }
}
