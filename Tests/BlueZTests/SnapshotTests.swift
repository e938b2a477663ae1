@testable import BlueZ
import Foundation
import DBus
import Testing

/// The update rules without a bus: what a signal does to the snapshot and which
/// events it yields.
@Suite struct SnapshotTests {
    static let device: DBusObjectPath = "/org/bluez/hci0/dev_A0_9E_1A_10_0A_E2"
    static let service: DBusObjectPath = "/org/bluez/hci0/dev_A0_9E_1A_10_0A_E2/service000c"
    static let char: DBusObjectPath = "/org/bluez/hci0/dev_A0_9E_1A_10_0A_E2/service000c/char000d"

    func deviceAdded(rssi: Int16?) -> [DBusValue] {
        var props: [(String, DBusValue)] = [
            ("Address", "A0:9E:1A:10:0A:E2"), ("AddressType", "public"), ("Name", "Polar H10 8C4F2A1B"),
            ("Adapter", .objectPath("/org/bluez/hci0")), ("UUIDs", .strings(["0000180D-0000-1000-8000-00805F9B34FB"])),
            ("ManufacturerData", .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(0x006B), .variant(.bytes([0x33, 0x1E])))])),
            ("Connected", false),
        ]
        if let rssi { props.append(("RSSI", .int16(rssi))) }
        return [.objectPath(Self.device), .dictionary(key: "s", value: "a{sv}", [DBusDictEntry("org.bluez.Device1", .properties(props))])]
    }

    @Test func addedDeviceIsDecoded() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: -60))).apply(to: &snapshot, into: &events)
        let d = try #require(snapshot.device(address: "a0:9e:1a:10:0a:e2"))
        #expect(events == [.deviceAdded(d)])
        #expect(d.rssi == -60)
        #expect(d.uuids == ["0000180d-0000-1000-8000-00805f9b34fb"])
        #expect(d.manufacturerData == [0x006B: [0x33, 0x1E]])
        #expect(d.displayName == "Polar H10 8C4F2A1B")
        #expect(snapshot.devices(on: "/org/bluez/hci0") == [d])
    }

    @Test func aHostileNameIsMadePrintable() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: -60))).apply(to: &snapshot, into: &events)
        let name = "H10\u{1B}[2J\u{1B}]0;owned\u{07}" + String(repeating: "A", count: 200)
        let signal: [DBusValue] = ["org.bluez.Device1", .properties([("Name", .string(name)), ("Alias", .string(name))]), .strings([])]
        try #require(MirrorUpdate.propertiesChanged(path: Self.device, signal)).apply(to: &snapshot, into: &events)
        let d = try #require(snapshot.device(path: Self.device))
        for shown in [d.name, d.alias, d.displayName] {
            let text = try #require(shown)
            #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(text)")
            #expect(text.count == 65 && text.hasPrefix("H10\u{FFFD}[2J"))
        }
    }

    @Test func invalidatedRSSIIsCleared() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: -60))).apply(to: &snapshot, into: &events)
        events = []
        let signal: [DBusValue] = ["org.bluez.Device1", .properties([]), .strings(["RSSI", "TxPower"])]
        try #require(MirrorUpdate.propertiesChanged(path: Self.device, signal)).apply(to: &snapshot, into: &events)
        let d = try #require(snapshot.device(path: Self.device))
        #expect(d.rssi == nil)
        #expect(events == [.deviceChanged(d, changed: ["RSSI"])])
    }

    @Test func reAddingAnObjectResetsWhatTheBagLacks() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: -60))).apply(to: &snapshot, into: &events)
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: nil))).apply(to: &snapshot, into: &events)
        #expect(snapshot.device(path: Self.device)?.rssi == nil)
    }

    @Test func valueAloneIsNoUpdate() {
        let value: [DBusValue] = ["org.bluez.GattCharacteristic1", .properties([("Value", .bytes([0x10, 0x48]))]), .strings([])]
        #expect(MirrorUpdate.propertiesChanged(path: Self.char, value) == nil)
        let both: [DBusValue] = ["org.bluez.GattCharacteristic1", .properties([("Value", .bytes([0x10])), ("Notifying", true)]), .strings([])]
        guard case .changed(_, _, let changed, _)? = MirrorUpdate.propertiesChanged(path: Self.char, both) else {
            Issue.record("Notifying dropped")
            return
        }
        #expect(Set(changed.keys) == ["Notifying"])
    }

    @Test func gattReadinessNeedsTheObjects() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        try #require(MirrorUpdate.interfacesAdded(deviceAdded(rssi: nil))).apply(to: &snapshot, into: &events)
        let resolved: [DBusValue] = ["org.bluez.Device1", .properties([("ServicesResolved", true), ("Connected", true)]), .strings([])]
        try #require(MirrorUpdate.propertiesChanged(path: Self.device, resolved)).apply(to: &snapshot, into: &events)
        #expect(snapshot.device(path: Self.device)?.servicesResolved == true)
        #expect(!snapshot.hasResolvedGATT(device: Self.device))

        let service: [DBusValue] = [.objectPath(Self.service), .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(
            "org.bluez.GattService1", .properties([("UUID", "0000180d-0000-1000-8000-00805f9b34fb"), ("Device", .objectPath(Self.device)), ("Primary", true)]))])]
        try #require(MirrorUpdate.interfacesAdded(service)).apply(to: &snapshot, into: &events)
        #expect(snapshot.hasResolvedGATT(device: Self.device, requiring: ["180D"]))
        #expect(!snapshot.hasResolvedGATT(device: Self.device, requiring: ["180D", "2A37"]))

        let char: [DBusValue] = [.objectPath(Self.char), .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(
            "org.bluez.GattCharacteristic1", .properties([("UUID", "00002a37-0000-1000-8000-00805f9b34fb"), ("Service", .objectPath(Self.service)),
                                                          ("Flags", .strings(["notify"])), ("Value", .bytes([]))]))])]
        try #require(MirrorUpdate.interfacesAdded(char)).apply(to: &snapshot, into: &events)
        #expect(snapshot.hasResolvedGATT(device: Self.device, requiring: ["180D", "2A37"]))
        #expect(snapshot.characteristic(device: Self.device, uuid: "2a37")?.service == Self.service)

        // Removing the device takes the GATT objects along, deepest first.
        events = []
        try #require(MirrorUpdate.interfacesRemoved([.objectPath(Self.device), .strings(["org.bluez.Device1"])])).apply(to: &snapshot, into: &events)
        #expect(snapshot.isEmpty)
        #expect(events.map(\.kind) == ["gattObjectRemoved", "gattObjectRemoved", "deviceRemoved"])
    }

    /// The lookups by address, adapter and device are indexes beside the tables: they
    /// must follow every add, change and removal, or a strap would be looked for where
    /// it no longer is.
    @Test func indexesFollowTheTables() throws {
        var snapshot = BlueZSnapshot()
        var events: [BlueZEvent] = []
        let hci0: DBusObjectPath = "/org/bluez/hci0"
        func path(_ i: Int) -> DBusObjectPath { hci0.appending(String(format: "dev_D0_0E_00_00_%02X_%02X", i >> 8, i & 0xFF)) }
        func address(_ i: Int) -> String { String(format: "d0:0e:00:00:%02x:%02x", i >> 8, i & 0xFF) }
        for i in 0..<5000 {
            let added: [DBusValue] = [.objectPath(path(i)), .dictionary(key: "s", value: "a{sv}", [DBusDictEntry("org.bluez.Device1", .properties([
                ("Address", .string(address(i))), ("Adapter", .objectPath("/org/bluez/hci0")), ("RSSI", .int16(-70)),
            ]))])]
            try #require(MirrorUpdate.interfacesAdded(added)).apply(to: &snapshot, into: &events)
        }
        #expect(snapshot.deviceCount == 5000 && snapshot.deviceCount(on: "/org/bluez/hci0") == 5000)
        #expect(snapshot.device(address: address(4321).uppercased())?.path == path(4321))

        // An Address change moves the device in the index.
        let renamed: [DBusValue] = ["org.bluez.Device1", .properties([("Address", "D0:0E:00:00:FF:FF")]), .strings([])]
        try #require(MirrorUpdate.propertiesChanged(path: path(7), renamed)).apply(to: &snapshot, into: &events)
        #expect(snapshot.device(address: address(7)) == nil)
        #expect(snapshot.devices(address: "d0:0e:00:00:ff:ff").map(\.path) == [path(7)])

        // A device's GATT objects are found through it, and go with it.
        let service = path(9).appending("service000c")
        let added: [DBusValue] = [.objectPath(service), .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(
            "org.bluez.GattService1", .properties([("UUID", "180d"), ("Device", .objectPath(path(9)))]))])]
        try #require(MirrorUpdate.interfacesAdded(added)).apply(to: &snapshot, into: &events)
        #expect(snapshot.services(device: path(9)).map(\.path) == [service])

        events = []
        for i in 0..<5000 {
            try #require(MirrorUpdate.interfacesRemoved([.objectPath(path(i)), .strings(["org.bluez.Device1"])])).apply(to: &snapshot, into: &events)
        }
        #expect(events.count == 5001 && events.filter { $0.kind == "deviceRemoved" }.count == 5000)
        #expect(snapshot.isEmpty && snapshot.deviceCount(on: "/org/bluez/hci0") == 0)
        #expect(snapshot.devices(address: "d0:0e:00:00:ff:ff").isEmpty && snapshot.services(device: path(9)).isEmpty)
    }
}

extension BlueZEvent {
    var kind: String {
        switch self {
        case .adapterAdded: "adapterAdded"
        case .adapterRemoved: "adapterRemoved"
        case .adapterChanged: "adapterChanged"
        case .deviceAdded: "deviceAdded"
        case .deviceRemoved: "deviceRemoved"
        case .deviceChanged: "deviceChanged"
        case .gattObjectAdded: "gattObjectAdded"
        case .gattObjectRemoved: "gattObjectRemoved"
        case .gattObjectChanged: "gattObjectChanged"
        case .bluezVanished: "bluezVanished"
        case .bluezAppeared: "bluezAppeared"
        }
    }
}
