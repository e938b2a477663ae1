import BlegateTestSupport
import BlueZ
import DBus
import Simulator
import Synchronization
import Testing

/// The mirror against the simulated bluetoothd on a private bus. Serialized: each
/// test runs its own daemon and simulator, and the machine has two cores.
@Suite(.serialized) struct MirrorTests {
    @Test func initialSnapshotHoldsTheAdapters() async throws {
        try await withMirror({ $0.adapters = 2 }) { h in
            let adapters = h.mirror.adapters
            #expect(adapters.map(\.interfaceName) == ["hci0", "hci1"])
            let hci0 = try #require(h.mirror.adapter(named: "hci0"))
            #expect(hci0.path == MirrorHarness.adapter)
            #expect(hci0.address.hasPrefix("B8:27:EB:"))
            #expect(hci0.powered)
            #expect(!hci0.discovering)
            #expect(h.mirror.isBlueZPresent)
            #expect(h.mirror.devices.isEmpty)
            // The initial load is announced like a daemon appearing.
            _ = try await h.recorder.next(after: 0, "bluezAppeared") { $0 == .bluezAppeared }
            #expect(h.recorder.events.contains { if case .adapterAdded(let a) = $0 { a.interfaceName == "hci1" } else { false } })
        }
    }

    @Test func discoveredDevicesAppearWithTheirAdvertisement() async throws {
        try await withMirror { h in
            let mark = h.recorder.count
            let devices = try await h.discover(count: 3)
            #expect(devices.count == 3)
            for d in devices {
                let identity = try #require(h.sim.devices.first { $0.address == d.address })
                #expect(d.adapter == MirrorHarness.adapter)
                #expect(d.addressType == identity.addressType)
                #expect(d.name == identity.name)
                #expect(d.rssi != nil)
                #expect(d.manufacturerData == identity.manufacturerData)
                #expect(d.uuids.contains(BluetoothUUID.normalized("180d")))
                #expect(!d.connected)
                #expect(h.mirror.device(address: d.address.lowercased())?.path == d.path)
                #expect(h.mirror.device(path: d.path) == d)
                _ = try await h.recorder.next(after: mark, "deviceAdded \(d.path)") {
                    if case .deviceAdded(let added) = $0 { added.path == d.path } else { false }
                }
            }
            let polar = try #require(devices.first { $0.name?.hasPrefix("Polar") == true })
            #expect(polar.manufacturerData[0x006B] != nil)
            try await h.mirror.waitUntil { $0.adapter(named: "hci0")?.discovering == true }
        }
    }

    /// Advertising reports that only refresh RSSI/TxPower go to the `onHeard` handler on
    /// the dispatcher thread, not through the event streams; the snapshot still follows
    /// them, and everything else (a device appearing, its name, data) is an event.
    @Test func heardAgainGoesToTheHandlerNotTheStreams() async throws {
        try await withMirror { h in
            let heard = Mutex<[String: [Int16]]>([:])
            h.mirror.onHeard { d in
                if let rssi = d.rssi { heard.withLock { $0[d.address, default: []].append(rssi) } }
            }
            // With a filter set, every report's RSSI is a signal (as bluetoothd does).
            _ = try await h.call(MirrorHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
            let devices = try await h.discover(count: 3)
            try await eventually("every device heard again three times", seconds: 60) {
                heard.withLock { h in devices.allSatisfy { (h[$0.address]?.count ?? 0) >= 3 } }
            }
            let rssiEvents = h.recorder.events.filter {
                if case .deviceChanged(_, let changed) = $0 { changed.isSubset(of: BlueZMirror.heardProperties) } else { false }
            }
            #expect(rssiEvents.isEmpty, "\(rssiEvents.count) RSSI-only changes went through the stream")
            for d in devices {
                #expect(h.recorder.events.contains { if case .deviceAdded(let a) = $0 { a.path == d.path } else { false } })
            }
            // The snapshot follows the reports the handler took.
            try await eventually("the mirror's RSSI is the last one heard") {
                devices.allSatisfy { d in h.mirror.device(path: d.path)?.rssi == heard.withLock { $0[d.address]?.last } }
            }
        }
    }

    @Test func connectTracksPropertiesAndFindsHeartRateByUUID() async throws {
        try await withMirror { h in
            let device = try #require(try await h.discover(count: 1).first)
            let mark = h.recorder.count
            _ = try await h.call(device.path, "org.bluez.Device1", "Connect")
            try await h.mirror.waitUntil { $0.device(path: device.path)?.connected == true }
            let change = try await h.recorder.next(after: mark, "Connected change") {
                if case .deviceChanged(let d, let changed) = $0 { d.path == device.path && changed.contains("Connected") } else { false }
            }
            if case .deviceChanged(let d, _) = change { #expect(d.connected) }

            let hr = try await h.mirror.waitFor { $0.characteristic(device: device.path, uuid: "2A37") }
            #expect(hr.uuid == "00002a37-0000-1000-8000-00805f9b34fb")
            #expect(hr.device == device.path)
            #expect(hr.flags.contains("notify"))
            #expect(!hr.notifying)
            #expect(h.mirror.services(device: device.path).contains { $0.uuid == BluetoothUUID.from16(0x180D) && $0.path == hr.service })
            #expect(h.mirror.characteristics(device: device.path).contains { $0.path == hr.path })
            try await h.mirror.waitUntil { $0.hasResolvedGATT(device: device.path, requiring: ["180d", "2a37", "180f"]) }
            #expect(!h.mirror.hasResolvedGATT(device: device.path, requiring: ["2a5b"]))
            try await h.mirror.waitUntil { $0.device(path: device.path)?.batteryPercentage != nil }

            // Notifying is mirrored; the Value signals that follow are not.
            _ = try await h.call(hr.path, "org.bluez.GattCharacteristic1", "StartNotify")
            try await h.mirror.waitUntil { $0.characteristic(path: hr.path)?.notifying == true }
        }
    }

    @Test func linkLossWithoutCacheRemovesGATTObjects() async throws {
        try await withMirror({ $0.gattCache = .no }) { h in
            let device = try #require(try await h.discover(count: 1).first)
            _ = try await h.call(device.path, "org.bluez.Device1", "Connect")
            let hr = try await h.mirror.waitFor { $0.characteristic(device: device.path, uuid: "2a37") }
            let mark = h.recorder.count
            #expect(await h.sim.linkLoss(device.address) == 1)
            try await h.mirror.waitUntil { s in
                s.device(path: device.path)?.connected == false && s.services(device: device.path).isEmpty
                    && s.characteristics(device: device.path).isEmpty
            }
            #expect(!h.mirror.hasResolvedGATT(device: device.path))
            #expect(h.mirror.device(path: device.path)?.servicesResolved == false)
            #expect(h.mirror.device(path: device.path)?.batteryPercentage == nil)
            _ = try await h.recorder.next(after: mark, "2A37 removed") {
                if case .gattObjectRemoved(let o) = $0 { o.path == hr.path } else { false }
            }
        }
    }

    @Test func daemonRestartEmptiesThenRebuildsTheMirror() async throws {
        try await withMirror { h in
            let device = try #require(try await h.discover(count: 2).first)
            _ = try await h.call(device.path, "org.bluez.Device1", "Connect")
            _ = try await h.mirror.waitFor { $0.characteristic(device: device.path, uuid: "2a37") }

            let mark = h.recorder.count
            // When restartDaemon returns the old daemon is off the bus; the mirror
            // empties when it sees that and stays empty until the new one (2 s later)
            // is loaded.
            await h.sim.restartDaemon(after: 2)
            try await h.mirror.waitUntil { $0.isEmpty }
            let vanished = try await h.recorder.next(after: mark, "bluezVanished") { $0 == .bluezVanished }
            #expect(vanished == .bluezVanished)
            _ = try await h.recorder.next(after: mark, "bluezAppeared") { $0 == .bluezAppeared }
            // bluetoothd may take its name before its adapters exist, so hci0 comes
            // back before or after bluezAppeared, but after bluezVanished.
            _ = try await h.recorder.next(after: mark, "hci0 added again") {
                if case .adapterAdded(let ad) = $0 { ad.path == MirrorHarness.adapter } else { false }
            }
            let events = Array(h.recorder.events.dropFirst(mark))
            let v = try #require(events.firstIndex(of: .bluezVanished))
            let a = try #require(events.firstIndex(of: .bluezAppeared))
            let added = try #require(events.firstIndex { if case .adapterAdded(let ad) = $0 { ad.path == MirrorHarness.adapter } else { false } })
            #expect(v < a)
            #expect(v < added)
            #expect(events.filter { $0 == .bluezVanished }.count == 1)

            try await h.mirror.waitUntil { $0.adapter(named: "hci0")?.powered == true }
            #expect(h.mirror.isBlueZPresent)
            #expect(h.mirror.device(path: device.path) == nil)

            // The new daemon's signals are followed: discovery works again.
            let again = try await h.discover(count: 1)
            #expect(!again.isEmpty)
        }
    }

    @Test func threeMatchRulesWhateverTheDeviceCount() async throws {
        try await withMirror { h in
            // nil only when the dbus-daemon was built without Debug.Stats (Debian's has it).
            let before = try #require(await h.mirrorMatchRules())
            // InterfacesAdded, InterfacesRemoved, PropertiesChanged, plus the
            // NameOwnerChanged rule for org.bluez that the D-Bus layer adds once.
            #expect(before == BlueZMirror.matchRules.count + 1)
            let devices = try await h.discover(count: 3)
            for d in devices { _ = try await h.call(d.path, "org.bluez.Device1", "Connect") }
            for d in devices { _ = try await h.mirror.waitFor { $0.characteristic(device: d.path, uuid: "2a37") } }
            #expect(await h.mirrorMatchRules() == before)
        }
    }

    @Test func notificationValuesLeaveTheMirrorAlone() async throws {
        try await withMirror { h in
            let device = try #require(try await h.discover(count: 1).first)
            _ = try await h.call(device.path, "org.bluez.Device1", "Connect")
            let hr = try await h.mirror.waitFor { $0.characteristic(device: device.path, uuid: "2a37") }
            // A client of its own counts the Value signals that pass.
            let values = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: hr.path))
            _ = try await h.call(hr.path, "org.bluez.GattCharacteristic1", "StartNotify")
            _ = try await h.recorder.next(after: 0, "Notifying") {
                if case .gattObjectChanged(let o, let changed) = $0 { o.path == hr.path && changed.contains("Notifying") } else { false }
            }
            let mark = h.recorder.count
            var seen = 0
            for await signal in values where signal.body.count >= 2 && signal.body[1].stringKeyedValue?["Value"] != nil {
                seen += 1
                if seen == 20 { break }
            }
            // Any event after these 20 notifications passes the mirror's ordered stream.
            _ = try await h.call(MirrorHarness.adapter, "org.bluez.Adapter1", "StopDiscovery")
            _ = try await h.recorder.next(after: mark, "Discovering false") {
                if case .adapterChanged(let a, let changed) = $0 { changed.contains("Discovering") && !a.discovering } else { false }
            }
            let characteristicEvents = h.recorder.events.dropFirst(mark).filter {
                if case .gattObjectChanged(let o, _) = $0 { o.path == hr.path } else { false }
            }
            #expect(characteristicEvents.isEmpty)
            #expect(h.mirror.characteristic(device: device.path, uuid: "2a37")?.notifying == true)
        }
    }

    @Test func adapterRemovalTakesItsDevicesAlong() async throws {
        try await withMirror { h in
            let devices = try await h.discover(count: 2)
            let mark = h.recorder.count
            await h.sim.removeAdapter(0, returnAfter: 0)
            try await h.mirror.waitUntil { $0.adapter(named: "hci0") == nil && $0.devices.isEmpty }
            for d in devices {
                _ = try await h.recorder.next(after: mark, "deviceRemoved") {
                    if case .deviceRemoved(let r) = $0 { r.path == d.path } else { false }
                }
            }
            _ = try await h.recorder.next(after: mark, "adapterRemoved") {
                if case .adapterRemoved(let a) = $0 { a.path == MirrorHarness.adapter } else { false }
            }
            _ = try await h.call("/org/blegate/Simulator", "org.blegate.Simulator1", "ReturnAdapter", [.uint32(0)],
                                 destination: "org.blegate.Simulator")
            let back = try await h.mirror.waitFor { $0.adapter(named: "hci0") }
            #expect(back.powered)
        }
    }

    @Test func bluetoothdStartingAfterTheMirrorIsPickedUp() async throws {
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(bus.busAddress)
        defer { connection.close() }
        let mirror = BlueZMirror(connection: connection)
        defer { mirror.stop() }
        let recorder = EventRecorder(mirror.events())
        try await mirror.start()
        #expect(!mirror.isBlueZPresent)
        #expect(mirror.snapshot.isEmpty)

        var config = SimulatorConfiguration()
        config.straps = 1
        let sim = try SimulatedBlueZ(configuration: config, bus: bus.busAddress)
        try await sim.start()
        _ = try await recorder.next(after: 0, "bluezAppeared") { $0 == .bluezAppeared }
        #expect(mirror.isBlueZPresent)
        // The owner change comes first; the objects follow with GetManagedObjects.
        try await mirror.waitUntil(timeout: .seconds(30)) { $0.adapter(named: "hci0") != nil }
        #expect(!recorder.events.contains(.bluezVanished))
        await sim.stop()
        _ = try await recorder.next(after: 0, "bluezVanished") { $0 == .bluezVanished }
        #expect(!mirror.isBlueZPresent)
        #expect(mirror.snapshot.isEmpty)
    }

    @Test func losingTheBusConnectionEmptiesTheMirror() async throws {
        try await withMirror { h in
            let mark = h.recorder.count
            h.mirrorConnection.close()
            _ = try await h.recorder.next(after: mark, "bluezVanished") { $0 == .bluezVanished }
            #expect(!h.mirror.isBlueZPresent)
            #expect(h.mirror.snapshot.isEmpty)
        }
    }

    @Test func waitForTimesOut() async throws {
        try await withMirror { h in
            await #expect(throws: BlueZMirrorError.timedOut) {
                try await h.mirror.waitUntil(timeout: .milliseconds(200)) { $0.device(address: "00:00:00:00:00:00") != nil }
            }
        }
    }
}
