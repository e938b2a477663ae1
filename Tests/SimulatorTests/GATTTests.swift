import BlegateTestSupport
import DBus
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Connection, GATT tree and notifications")
struct GATTTests {
    @Test("Connect builds BlueZ's GATT tree with the right UUIDs and flags")
    func tree() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]  // dev_A0_9E_1A... (Polar, public) sorts first
            try await h.connect(device)
            #expect(try await h.get(device, "org.bluez.Device1", "Connected") == .bool(true))
            let objects = try await h.managedObjects()
            let chars = objects.filter { $0.key.isDescendant(of: device) }.compactMap { $0.value[SimHarness.chr] }
            func flags(_ u: UInt16) -> [String]? {
                chars.first { $0["UUID"] == .string(bluetoothUUID(u)) }?["Flags"]?.stringArrayValue
            }
            #expect(flags(0x2A37) == ["notify"])
            #expect(flags(0x2A38) == ["read"])
            #expect(flags(0x2A19) == ["read", "notify"])
            for u: UInt16 in [0x2A29, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28] { #expect(flags(u) == ["read"]) }
            let services = objects.filter { $0.key.isDescendant(of: device) }.compactMap { $0.value["org.bluez.GattService1"]?["UUID"]?.stringValue }
            #expect(Set(services).isSuperset(of: [bluetoothUUID(0x180D), bluetoothUUID(0x180F), bluetoothUUID(0x180A), bluetoothUUID(0x1801)]))
            let hrm = try await h.characteristic(device, 0x2A37)
            #expect(hrm.rawValue.contains("/service00") && hrm.lastElement.hasPrefix("char"))
            let cccd = objects.first { $0.key.isDescendant(of: hrm) && $0.key != hrm }
            #expect(cccd?.value["org.bluez.GattDescriptor1"]?["UUID"] == .string(bluetoothUUID(0x2902)))
            #expect(objects[device]?["org.bluez.Battery1"]?["Percentage"]?.integerValue != nil)
            #expect(objects[hrm]?[SimHarness.chr]?["NotifyAcquired"] == .bool(false))
            #expect(objects[hrm]?[SimHarness.chr]?["Notifying"] == .bool(false))
            // Connect again: success at once (5.66 for a connected LE device).
            _ = try await h.call(device, "org.bluez.Device1", "Connect")
        }
    }

    @Test("StartNotify: Value PropertiesChanged payloads equal the payload log")
    func startNotify() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[1]
            try await h.connect(device)
            let hrm = try await h.characteristic(device, 0x2A37)
            let values = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: hrm))
            _ = try await h.call(hrm, SimHarness.chr, "StartNotify")
            let got = try await collect(values, 10, "Value notifications") { valueBytes($0) != nil }.compactMap(valueBytes)
            #expect(try await h.get(hrm, SimHarness.chr, "Notifying") == .bool(true))
            let address = try await h.address(of: device)
            let logged = h.sim.payloadLog.records(address: address).filter { $0.uuid == bluetoothUUID(0x2A37) }
            #expect(Array(logged.prefix(10).map(\.bytes)) == got)
            #expect(logged.prefix(10).allSatisfy { $0.delivery == .notify && !$0.malformed })
            #expect(Array(logged.prefix(10).map(\.sequence)) == Array(0..<10))
            // AcquireNotify while a StartNotify session exists: 5.66 answers InProgress.
            await expectError("org.bluez.Error.InProgress") { _ = try await h.call(hrm, SimHarness.chr, "AcquireNotify", [.properties([])]) }
            _ = try await h.call(hrm, SimHarness.chr, "StopNotify")
            #expect(try await h.get(hrm, SimHarness.chr, "Notifying") == .bool(false))
            await expectError("org.bluez.Error.Failed", message: "No notify session started") { _ = try await h.call(hrm, SimHarness.chr, "StopNotify") }
        }
    }

    @Test("AcquireNotify: fd reads equal the payload log; second acquire NotPermitted; close releases")
    func acquireNotify() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[2]
            try await h.connect(device)
            let hrm = try await h.characteristic(device, 0x2A37)
            let reply = try await h.call(hrm, SimHarness.chr, "AcquireNotify", [.properties([])])
            guard case .unixFD(let fd) = reply.first, case .uint16(let mtu) = reply.last else { throw TestFailure("bad reply \(reply)") }
            #expect(mtu >= 23)
            #expect(try await h.get(hrm, SimHarness.chr, "NotifyAcquired") == .bool(true))
            await expectError("org.bluez.Error.NotPermitted", message: "Notify acquired") {
                _ = try await h.call(hrm, SimHarness.chr, "AcquireNotify", [.properties([])])
            }
            await expectError("org.bluez.Error.NotPermitted", message: "Notify acquired") { _ = try await h.call(hrm, SimHarness.chr, "StartNotify") }
            // Ten datagrams read as they come (or the socket's end, which fails the count).
            var packets: [[UInt8]] = []
            var ended = false
            _ = await eventually(timeout: 30, every: .milliseconds(10)) {
                var p = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
                while packets.count < 10, !ended, poll(&p, 1, 0) > 0 {
                    var buf = [UInt8](repeating: 0, count: 512)
                    let n = buf.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
                    if n > 0 { packets.append(Array(buf[0..<n])) } else { ended = true }
                }
                return packets.count >= 10 || ended
            }
            #expect(packets.count == 10)
            let address = try await h.address(of: device)
            // The log line is written just after the datagram is sent: wait for it.
            let wanted = packets.count
            try await eventually("the payload log holds what was read") {
                h.sim.payloadLog.records(address: address).filter { $0.uuid == bluetoothUUID(0x2A37) }.count >= wanted
            }
            let logged = h.sim.payloadLog.records(address: address).filter { $0.uuid == bluetoothUUID(0x2A37) }
            #expect(Array(logged.prefix(packets.count).map(\.bytes)) == packets)
            #expect(logged.prefix(10).allSatisfy { $0.delivery == .acquire })
            fd.close()
            try await eventually("NotifyAcquired=false after close") {
                try await h.get(hrm, SimHarness.chr, "NotifyAcquired") == .bool(false)
            }
        }
    }

    @Test("ReadValue on Battery Level, Body Sensor Location and Device Information")
    func reads() async throws {
        try await withSimulator { h in
            let device = try await h.discover(count: 3)[0]
            try await h.connect(device)
            let address = try await h.address(of: device)
            let identity = try #require(h.sim.devices.first { $0.address == address })
            func read(_ u: UInt16, _ options: [(String, DBusValue)] = []) async throws -> [UInt8] {
                let c = try await h.characteristic(device, u)
                return try await h.call(c, SimHarness.chr, "ReadValue", [.properties(options)]).first?.bytesValue ?? []
            }
            let battery = try await read(0x2A19)
            #expect(battery.count == 1 && battery[0] <= 100)
            #expect(try await h.get(device, "org.bluez.Battery1", "Percentage") == .byte(battery[0]))
            #expect(try await read(0x2A38) == [1])
            #expect(String(decoding: try await read(0x2A29), as: UTF8.self) == "Polar Electro Oy")
            #expect(String(decoding: try await read(0x2A24), as: UTF8.self) == "H10")
            #expect(String(decoding: try await read(0x2A25), as: UTF8.self) == identity.serialNumber)
            let firmware = try await read(0x2A26), hardware = try await read(0x2A27), software = try await read(0x2A28)
            #expect(!firmware.isEmpty && !hardware.isEmpty && !software.isEmpty)
            #expect(String(decoding: try await read(0x2A29, [("offset", .uint16(6))]), as: UTF8.self) == "Electro Oy")
            let c = try await h.characteristic(device, 0x2A29)
            await expectError("org.bluez.Error.InvalidArguments", message: "Invalid offset") {
                _ = try await h.call(c, SimHarness.chr, "ReadValue", [.properties([("offset", .uint16(99))])])
            }
            await expectError("org.bluez.Error.NotSupported") {
                _ = try await h.call(c, SimHarness.chr, "WriteValue", [.bytes([1]), .properties([])])
            }
            let hrm = try await h.characteristic(device, 0x2A37)
            await expectError("org.bluez.Error.NotPermitted", message: "Read not permitted") {
                _ = try await h.call(hrm, SimHarness.chr, "ReadValue", [.properties([])])
            }
        }
    }
}
