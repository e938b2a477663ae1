import BlegateTestSupport
import DBus
import Simulator
import Testing

@Suite("Adapters and discovery")
struct DiscoveryTests {
    @Test("Devices appear through InterfacesAdded only once discovery runs, one per strap")
    func discovery() async throws {
        try await withSimulator({ $0.straps = 4; $0.watches = 1 }) { h in
            let added = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            // Eight housekeeping rounds (800 ms of the simulator's life): a discovering
            // adapter reports every strap within its first 450 ms.
            let rounds = await h.sim.housekeepingRounds
            try await eventually("eight housekeeping rounds") { await h.sim.housekeepingRounds >= rounds + 8 }
            #expect(try await h.devicePaths().isEmpty)
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            #expect(try await h.get(SimHarness.adapter, "org.bluez.Adapter1", "Discovering") == .bool(true))
            let signals = try await collect(added, 5, "InterfacesAdded") { s in
                s.body.first?.objectPathValue.map { $0.lastElement.hasPrefix("dev_") } ?? false
            }
            let addresses = Set(signals.compactMap { $0.body[1].stringKeyedValue?["org.bluez.Device1"]?.stringKeyedValue?["Address"]?.stringValue })
            #expect(addresses == Set(h.sim.devices.map(\.address)))
            let objects = try await h.managedObjects()
            for d in h.sim.devices {
                let dev = objects[SimHarness.adapter.appending(d.objectName)]?["org.bluez.Device1"]
                #expect(dev?["Name"] == .string(d.name))
                #expect(dev?["AddressType"] == .string(d.addressType))
                #expect(dev?["UUIDs"]?.stringArrayValue?.contains("0000180d-0000-1000-8000-00805f9b34fb") == true)
                #expect(dev?["RSSI"]?.integerValue != nil)
                #expect(dev?["Connected"] == .bool(false))
                if d.model == .polarH10 { #expect(dev?["ManufacturerData"]?.dictionaryEntries?.first?.key == .uint16(0x006B)) }
            }
        }
    }

    @Test("Discovery sessions are per client; errors as bluetoothd 5.66 sends them")
    func sessions() async throws {
        try await withSimulator { h in
            let other = try await DBusConnection.connect(h.bus.busAddress)
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            await expectError("org.bluez.Error.InProgress", message: "Operation already in progress") {
                _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
            await expectError("org.bluez.Error.Failed", message: "No discovery started") {
                _ = try await other.call(destination: "org.bluez", path: SimHarness.adapter, interface: "org.bluez.Adapter1", member: "StopDiscovery")
            }
            await expectError("org.bluez.Error.DoesNotExist") {
                _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "RemoveDevice", [.objectPath("/org/bluez/hci0/dev_11_22_33_44_55_66")])
            }
            await expectError("org.bluez.Error.InvalidArguments") {
                _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Bogus", .string("x"))])])
            }
            // A second client's session keeps discovery on until its name vanishes.
            _ = try await other.call(destination: "org.bluez", path: SimHarness.adapter, interface: "org.bluez.Adapter1", member: "StartDiscovery")
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "StopDiscovery")
            #expect(try await h.get(SimHarness.adapter, "org.bluez.Adapter1", "Discovering") == .bool(true))
            other.close()
            try await eventually("Discovering=false after the client left") {
                try await h.get(SimHarness.adapter, "org.bluez.Adapter1", "Discovering") == .bool(false)
            }
            // Powered off: NotReady.
            _ = try await h.call(SimHarness.adapter, SimHarness.props, "Set", ["org.bluez.Adapter1", "Powered", .variant(.bool(false))])
            await expectError("org.bluez.Error.NotReady") {
                _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
            let filters = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "GetDiscoveryFilters")
            #expect(filters.first?.stringArrayValue == ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])
        }
    }

    @Test("RSSI changes while discovering")
    func rssi() async throws {
        try await withSimulator({ $0.straps = 1; $0.advertisingInterval = 0.2 }) { h in
            let changes = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged"))
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
            _ = try await h.discover(count: 1)
            _ = try await collect(changes, 3, "RSSI changes") { s in s.body.count == 3 && s.body[1].stringKeyedValue?["RSSI"] != nil }
        }
    }
}
