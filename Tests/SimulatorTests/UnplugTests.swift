import BlegateTestSupport
import DBus
import Simulator
import Testing

@Suite("Scheduled adapter unplug")
struct UnplugTests {
    @Test("--unplug 1@20+1: hci1's link drops, its devices and then hci1 go; it returns powered, with its address, and discovers again")
    func scheduledUnplug() async throws {
        try await withSimulator({
            $0.adapters = 2
            $0.straps = 2
            // 20 s: discovery and a connect come first even on a loaded machine.
            $0.unplugs = [AdapterUnplug(adapter: 1, at: 20, for: 1)]
        }) { h in
            let hci1: DBusObjectPath = "/org/bluez/hci1"
            let everything = try await h.client.signals(matching: DBusMatchRule(sender: "org.bluez"), bufferSize: 8192)
            let address = try await h.get(hci1, "org.bluez.Adapter1", "Address")
            _ = try await h.call(hci1, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("2 devices on hci1") { try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.count == 2 }
            let device = try #require(try await h.devicePaths().first { $0.isDescendant(of: hci1) })
            try await h.connect(device)
            #expect(try await h.control("LinkCounts") == [.array(element: "u", [.uint32(0), .uint32(1)])])

            _ = try await collect(everything, 1, "hci1 removed") { s in
                s.member == "InterfacesRemoved" && s.body.first?.objectPathValue == hci1
            }
            #expect(try await h.control("LinkCounts") == [.array(element: "u", [.uint32(0), .uint32(0)])])
            #expect(try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.isEmpty)
            try await eventually("hci1 back") { try await h.managedObjects()[hci1] != nil }
            #expect(try await h.get(hci1, "org.bluez.Adapter1", "Address") == address)
            #expect(try await h.get(hci1, "org.bluez.Adapter1", "Powered") == .bool(true))
            #expect(try await h.get(hci1, "org.bluez.Adapter1", "Discovering") == .bool(false))
            _ = try await h.call(hci1, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("devices on hci1 again") { try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.count == 2 }
            try await h.connect(device)
        }
    }

    @Test("An unplug signals in 5.66's order: Connected=false, Powered/Discovering=false, then the devices, then the adapter")
    func unplugOrder() async throws {
        try await withSimulator({ $0.adapters = 2; $0.straps = 2 }) { h in
            let hci1: DBusObjectPath = "/org/bluez/hci1"
            _ = try await h.call(hci1, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("2 devices on hci1") { try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.count == 2 }
            let device = try #require(try await h.devicePaths().first { $0.isDescendant(of: hci1) })
            try await h.connect(device)
            let everything = try await h.client.signals(matching: DBusMatchRule(sender: "org.bluez"), bufferSize: 8192)
            _ = try await h.control("RemoveAdapter", [.uint32(1), .double(0)])
            var got: [DBusSignal] = []
            repeat {
                got += try await collect(everything, 1, "hci1 removed")
            } while !(got.last!.member == "InterfacesRemoved" && got.last!.body.first?.objectPathValue == hci1)
            func index(_ what: String, _ match: (DBusSignal) -> Bool) throws -> Int {
                guard let i = got.firstIndex(where: match) else { throw TestFailure("no \(what) in \(got.map { "\($0.member ?? "") \($0.path?.rawValue ?? "")" })") }
                return i
            }
            let disconnected = try index("Connected=false") { s in
                s.path == device && s.member == "PropertiesChanged" && s.body.count >= 2 && s.body[1].stringKeyedValue?["Connected"]?.unwrapped == .bool(false)
            }
            let poweredOff = try index("Powered=false") { s in
                s.path == hci1 && s.member == "PropertiesChanged" && s.body.count >= 2 && s.body[1].stringKeyedValue?["Powered"]?.unwrapped == .bool(false)
            }
            let deviceGone = try index("device InterfacesRemoved") { s in
                s.member == "InterfacesRemoved" && s.body.first?.objectPathValue == device
                    && s.body.count >= 2 && s.body[1].stringArrayValue?.contains("org.bluez.Device1") == true
            }
            let adapterGone = got.count - 1
            #expect(disconnected < poweredOff && poweredOff < deviceGone && deviceGone < adapterGone)
            #expect(got[poweredOff].body[1].stringKeyedValue?["Discovering"]?.unwrapped == .bool(false))
        }
    }
}
