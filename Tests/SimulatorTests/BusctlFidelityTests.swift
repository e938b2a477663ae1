import BlegateTestSupport
import DBus
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `busctl introspect` printed against the real bluetoothd 5.66 (captured in
/// the QEMU VM of /work/shared/realbluez): member, kind, signature. The simulator
/// must show the same members with the same signatures to a third-party client.
enum RealBlueZ566 {
    static let adapter1: [(String, String, String)] = [
        (".GetDiscoveryFilters", "method", "-"), (".RemoveDevice", "method", "o"), (".SetDiscoveryFilter", "method", "a{sv}"),
        (".StartDiscovery", "method", "-"), (".StopDiscovery", "method", "-"),
        (".Address", "property", "s"), (".AddressType", "property", "s"), (".Alias", "property", "s"), (".Class", "property", "u"),
        (".Discoverable", "property", "b"), (".DiscoverableTimeout", "property", "u"), (".Discovering", "property", "b"),
        (".ExperimentalFeatures", "property", "as"), (".Modalias", "property", "s"), (".Name", "property", "s"),
        (".Pairable", "property", "b"), (".PairableTimeout", "property", "u"), (".Powered", "property", "b"),
        (".Roles", "property", "as"), (".UUIDs", "property", "as"),
    ]
    static let device1: [(String, String, String)] = [
        (".CancelPairing", "method", "-"), (".Connect", "method", "-"), (".ConnectProfile", "method", "s"),
        (".Disconnect", "method", "-"), (".DisconnectProfile", "method", "s"), (".Pair", "method", "-"),
        (".Adapter", "property", "o"), (".Address", "property", "s"), (".AddressType", "property", "s"), (".Alias", "property", "s"),
        (".Appearance", "property", "q"), (".Blocked", "property", "b"), (".Bonded", "property", "b"), (".Class", "property", "u"),
        (".Connected", "property", "b"), (".Icon", "property", "s"), (".LegacyPairing", "property", "b"),
        (".ManufacturerData", "property", "a{qv}"), (".Modalias", "property", "s"), (".Name", "property", "s"),
        (".Paired", "property", "b"), (".RSSI", "property", "n"), (".ServiceData", "property", "a{sv}"),
        (".ServicesResolved", "property", "b"), (".Trusted", "property", "b"), (".TxPower", "property", "n"),
        (".UUIDs", "property", "as"), (".WakeAllowed", "property", "b"),
    ]
    static let battery1: [(String, String, String)] = [(".Percentage", "property", "y")]
    static let service1: [(String, String, String)] = [
        (".Device", "property", "o"), (".Includes", "property", "ao"), (".Primary", "property", "b"), (".UUID", "property", "s"),
    ]
    static let characteristic1: [(String, String, String)] = [
        (".AcquireNotify", "method", "a{sv}"), (".AcquireWrite", "method", "a{sv}"), (".ReadValue", "method", "a{sv}"),
        (".StartNotify", "method", "-"), (".StopNotify", "method", "-"), (".WriteValue", "method", "aya{sv}"),
        (".Flags", "property", "as"), (".MTU", "property", "q"), (".NotifyAcquired", "property", "b"), (".Notifying", "property", "b"),
        (".Service", "property", "o"), (".UUID", "property", "s"), (".Value", "property", "ay"), (".WriteAcquired", "property", "b"),
    ]
    static let descriptor1: [(String, String, String)] = [
        (".ReadValue", "method", "a{sv}"), (".WriteValue", "method", "aya{sv}"),
        (".Characteristic", "property", "o"), (".UUID", "property", "s"), (".Value", "property", "ay"),
    ]
    static let objectManager: [(String, String, String)] = [
        (".GetManagedObjects", "method", "-"), (".InterfacesAdded", "signal", "oa{sa{sv}}"), (".InterfacesRemoved", "signal", "oas"),
    ]
}

/// Runs a command and returns its stdout.
func run(_ command: String) -> String {
    shellBlocking(command + " 2>&1").out
}

/// `busctl introspect` rows of one interface: member → (kind, signature).
func introspectRows(_ text: String, interface: String) -> [String: (String, String)] {
    var rows: [String: (String, String)] = [:]
    var inside = false
    for line in text.split(separator: "\n") {
        let cols = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard cols.count >= 3 else { continue }
        if cols[1] == "interface" {
            inside = cols[0] == interface
            continue
        }
        if inside, cols[0].hasPrefix(".") { rows[cols[0]] = (cols[1], cols[2]) }
    }
    return rows
}

@Suite("Third-party clients see BlueZ 5.66's interfaces")
struct BusctlFidelityTests {
    func check(_ text: String, _ interface: String, _ expected: [(String, String, String)],
               sourceLocation: SourceLocation = #_sourceLocation) {
        let rows = introspectRows(text, interface: interface)
        #expect(!rows.isEmpty, "\(interface) missing in:\n\(text)", sourceLocation: sourceLocation)
        for (member, kind, signature) in expected {
            let row = rows[member]
            #expect(row?.0 == kind && row?.1 == signature, "\(interface)\(member): got \(String(describing: row))", sourceLocation: sourceLocation)
        }
        #expect(rows.count == expected.count, "\(interface) members: \(rows.keys.sorted())", sourceLocation: sourceLocation)
    }

    @Test("busctl tree/introspect and gdbus introspect match the real daemon")
    func introspection() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let hrm = try await h.characteristic(device, 0x2A37)
            let cccd = try #require(try await h.managedObjects().keys.first { $0.isDescendant(of: hrm) && $0 != hrm })
            let service = try #require(hrm.parent)
            let a = h.bus.address
            let tree = run("busctl --address=\(a) tree org.bluez")
            #expect(tree.contains(hrm.rawValue) && tree.contains(cccd.rawValue) && tree.contains("/org/bluez/hci0"))
            check(run("busctl --address=\(a) introspect org.bluez /org/bluez/hci0"), "org.bluez.Adapter1", RealBlueZ566.adapter1)
            let dev = run("busctl --address=\(a) introspect org.bluez \(device.rawValue)")
            check(dev, "org.bluez.Device1", RealBlueZ566.device1)
            check(dev, "org.bluez.Battery1", RealBlueZ566.battery1)
            check(run("busctl --address=\(a) introspect org.bluez \(service.rawValue)"), "org.bluez.GattService1", RealBlueZ566.service1)
            check(run("busctl --address=\(a) introspect org.bluez \(hrm.rawValue)"), "org.bluez.GattCharacteristic1", RealBlueZ566.characteristic1)
            check(run("busctl --address=\(a) introspect org.bluez \(cccd.rawValue)"), "org.bluez.GattDescriptor1", RealBlueZ566.descriptor1)
            check(run("busctl --address=\(a) introspect org.bluez /"), "org.freedesktop.DBus.ObjectManager", RealBlueZ566.objectManager)
            let root = run("busctl --address=\(a) introspect org.bluez /org/bluez")
            #expect(root.contains("org.bluez.AgentManager1") && root.contains("org.bluez.ProfileManager1"))
            let gdbus = run("gdbus introspect --address \(a) --dest org.bluez --object-path \(hrm.rawValue)")
            #expect(gdbus.contains("interface org.bluez.GattCharacteristic1"))
            #expect(gdbus.contains("AcquireNotify(in  a{sv} options,") && gdbus.contains("out h fd,") && gdbus.contains("out q mtu)"))
            #expect(gdbus.contains("readonly ay Value") && gdbus.contains("readonly as Flags = ['notify']"))
        }
    }
}
