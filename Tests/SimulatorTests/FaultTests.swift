import BlegateTestSupport
#if canImport(Glibc)
import Glibc
#endif
import DBus
import Simulator
import Testing

@Suite("GATT cache modes and faults")
struct FaultTests {
    static func notifyAndLoseLink(_ h: SimHarness) async throws -> (DBusObjectPath, DBusObjectPath, DBusSignalStream) {
        let device = try await h.discover(count: 3)[0]
        try await h.connect(device)
        let hrm = try await h.characteristic(device, 0x2A37)
        let values = try await h.client.signals(matching: DBusMatchRule(
            sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: hrm))
        _ = try await h.call(hrm, SimHarness.chr, "StartNotify")
        _ = try await collect(values, 3, "notifications before link loss") { valueBytes($0) != nil }
        let n = try await h.control("LinkLoss", [.string(try await h.address(of: device))])
        #expect(n == [.uint32(1)])
        try await eventually("Connected=false") { try await h.get(device, "org.bluez.Device1", "Connected") == .bool(false) }
        #expect(try await h.get(device, "org.bluez.Device1", "ServicesResolved") == .bool(false))
        return (device, hrm, values)
    }

    @Test("Cache=always: objects survive a link loss and the StartNotify session resumes")
    func cacheAlways() async throws {
        try await withSimulator({ $0.gattCache = .always }) { h in
            let (device, hrm, values) = try await Self.notifyAndLoseLink(h)
            let objects = try await h.managedObjects()
            #expect(objects[hrm] != nil)
            #expect(objects[device]?["org.bluez.Battery1"] == nil)
            #expect(try await h.get(hrm, SimHarness.chr, "Notifying") == .bool(true))
            try await h.connect(device)
            // Notifications flow again without a new StartNotify.
            _ = try await collect(values, 3, "notifications after reconnect") { valueBytes($0) != nil }
            let address = try await h.address(of: device)
            let seqs = h.sim.payloadLog.records(address: address).filter { $0.uuid == bluetoothUUID(0x2A37) }.map(\.sequence)
            #expect(seqs == Array(0..<seqs.count))
        }
    }

    @Test("Cache=no: services go with the link (InterfacesRemoved) and come back on reconnect")
    func cacheNo() async throws {
        try await withSimulator({ $0.gattCache = .no }) { h in
            let removed = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
            let (device, hrm, _) = try await Self.notifyAndLoseLink(h)
            _ = try await collect(removed, 1, "InterfacesRemoved of the HR characteristic") { $0.body.first?.objectPathValue == hrm }
            #expect(try await h.managedObjects()[hrm] == nil)
            #expect(try await h.managedObjects()[device] != nil)
            try await h.connect(device)
            #expect(try await h.managedObjects()[hrm] != nil)
            #expect(try await h.get(hrm, SimHarness.chr, "Notifying") == .bool(false))
        }
    }

    @Test("Link loss hangs up an AcquireNotify socket")
    func linkLossHangsUp() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let hrm = try await h.characteristic(device, 0x2A37)
            let reply = try await h.call(hrm, SimHarness.chr, "AcquireNotify", [.properties([])])
            guard case .unixFD(let fd) = reply.first else { throw TestFailure("no fd") }
            _ = try await h.control("LinkLoss", [.string("*")])
            try await eventually("EOF on the acquired socket") {
                var buf = [UInt8](repeating: 0, count: 64)
                let n = buf.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                return n == 0
            }
            #expect(try await h.get(hrm, SimHarness.chr, "NotifyAcquired") == .bool(false))
        }
    }

    @Test("Connect fails with le-connection-abort-by-local when told to")
    func connectFailure() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            _ = try await h.control("FailConnect", [.string(""), .uint32(2)])
            for _ in 0..<2 {
                await expectError("org.bluez.Error.Failed", message: "le-connection-abort-by-local") {
                    _ = try await h.call(device, "org.bluez.Device1", "Connect")
                }
            }
            try await h.connect(device)
        }
    }

    @Test("Malformed payloads are sent and flagged in the payload log")
    func malformed() async throws {
        try await withSimulator({ $0.malformedRate = 1 }) { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let hrm = try await h.characteristic(device, 0x2A37)
            let values = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: hrm))
            _ = try await h.call(hrm, SimHarness.chr, "StartNotify")
            let got = try await collect(values, 5, "malformed notifications") { valueBytes($0) != nil }.compactMap(valueBytes)
            let logged = h.sim.payloadLog.records(address: try await h.address(of: device))
            #expect(Array(logged.prefix(5).map(\.bytes)) == got)
            #expect(logged.prefix(5).allSatisfy { $0.malformed })
        }
    }

    @Test("A device that stops advertising is not discovered again and can be removed at once")
    func stopAdvertising() async throws {
        try await withSimulator({ $0.straps = 2 }) { h in
            let devices = try await h.discover(count: 2)
            let address = try await h.address(of: devices[0])
            _ = try await h.control("StopAdvertising", [.string(address), .bool(true)])
            try await eventually("device removed") { try await h.managedObjects()[devices[0]] == nil }
            // Three of its report slots pass on the discovering adapter: none puts it back.
            let reports = try #require(await h.sim.advertisingReports(address))
            try await eventually("three report slots") { (await h.sim.advertisingReports(address)?.due ?? 0) >= reports.due + 3 }
            #expect(try await h.managedObjects()[devices[0]] == nil)
            #expect(await h.sim.advertisingReports(address)?.delivered == reports.delivered)
            _ = try await h.control("StartAdvertising", [.string(address)])
            try await eventually("device back") { try await h.managedObjects()[devices[0]] != nil }
        }
    }

    @Test("bluetoothd restart: NameOwnerChanged, fresh tree, sessions dropped")
    func restart() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let owners = try await h.client.nameOwnerChanges(of: "org.bluez")
            var it = owners.makeAsyncIterator()
            let first = await it.next() ?? nil
            #expect(first != nil)
            _ = try await h.control("RestartDaemon", [.double(0.5)])
            let gone = await it.next()
            #expect(gone == .some(nil))
            let back = await it.next() ?? nil
            #expect(back != nil && back != first)
            try await eventually("hci0 back") { try await h.managedObjects()[SimHarness.adapter] != nil }
            #expect(try await h.devicePaths().isEmpty)
            #expect(try await h.get(SimHarness.adapter, "org.bluez.Adapter1", "Discovering") == .bool(false))
            _ = try await h.discover(count: 3)
        }
    }

    @Test("Adapter removal and return; power off drops links and devices")
    func adapterRemovalAndPower() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let removed = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved"))
            let added = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            _ = try await h.control("RemoveAdapter", [.uint32(0), .double(0.5)])
            _ = try await collect(removed, 1, "adapter InterfacesRemoved") { $0.body.first?.objectPathValue == SimHarness.adapter }
            _ = try await collect(added, 1, "adapter InterfacesAdded") { $0.body.first?.objectPathValue == SimHarness.adapter }
            #expect(try await h.devicePaths().isEmpty)

            let again = try await h.discover(count: 3)[0]
            try await h.connect(again)
            _ = try await h.call(SimHarness.adapter, SimHarness.props, "Set", ["org.bluez.Adapter1", "Powered", .variant(.bool(false))])
            try await eventually("devices gone after power off") { try await h.devicePaths().isEmpty }
            #expect(try await h.get(SimHarness.adapter, "org.bluez.Adapter1", "Discovering") == .bool(false))
            _ = try await h.call(SimHarness.adapter, SimHarness.props, "Set", ["org.bluez.Adapter1", "Powered", .variant(.bool(true))])
            _ = try await h.discover(count: 3)
        }
    }

    @Test("Same seed, same devices and same payload sequence over the bus")
    func determinismOverBus() async throws {
        var runs: [[String: [[UInt8]]]] = []
        for _ in 0..<2 {
            try await withSimulator({ $0.seed = 77 }) { h in
                var out: [String: [[UInt8]]] = [:]
                for device in try await h.discover(count: 3) {
                    try await h.connect(device)
                    let hrm = try await h.characteristic(device, 0x2A37)
                    _ = try await h.call(hrm, SimHarness.chr, "StartNotify")
                }
                for d in h.sim.devices {
                    try await eventually("6 payloads from \(d.name)") { h.sim.payloadLog.records(address: d.address).count >= 6 }
                    out[d.address + " " + d.name] = h.sim.payloadLog.records(address: d.address).prefix(6).map(\.bytes)
                }
                runs.append(out)
            }
        }
        #expect(runs[0] == runs[1])
    }
}
