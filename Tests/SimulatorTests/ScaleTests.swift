import BlegateTestSupport
import DBus
import Simulator
import Testing

@Suite("Scales")
struct ScaleTests {
    @Test("a scale is silent until StepOn, then advertises, indicates one imperial Weight Measurement to a StartNotify client, and sleeps")
    func stepOn() async throws {
        try await withSimulator({ c in
            c.straps = 1
            c.scales = 1
        }) { h in
            let scale = try #require(h.sim.devices.first { $0.model == .scale })
            _ = try await h.call(SimHarness.adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [.properties([("Transport", .string("le"))])])
            let strap = try await h.discover(count: 1)[0]
            // With a filter every advertising report is signalled: three of the strap's pass
            // while the scale, not stepped on, is never reported.
            let reports = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: strap))
            _ = try await collect(reports, 3, "the strap's advertising reports") { s in
                s.body.count > 1 && s.body[1].stringKeyedValue?["RSSI"] != nil
            }
            #expect(try await h.devicePaths() == [strap])

            await expectError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await h.control("StepOn", [.string(scale.address), .double(700), .double(70), .double(0), .bool(true)])
            }
            let affected = try await h.control("StepOn", [.string(scale.address), .double(181.28), .double(70.1), .double(0), .bool(true)])
            #expect(affected == [.uint32(1)])
            try await eventually("the scale advertises") { try await h.devicePaths().count == 2 }
            let device = try #require(try await h.devicePaths().first { $0 != strap })
            try await h.connect(device)
            let weight = try await h.characteristic(device, 0x2A9D)
            #expect(try await h.get(weight, SimHarness.chr, "Flags") == .strings(["indicate"]))
            _ = try await h.characteristic(device, 0x2A9C)
            await expectError("org.bluez.Error.NotSupported") { _ = try await h.call(weight, SimHarness.chr, "AcquireNotify", [.properties([])]) }
            let values = try await h.client.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: SimHarness.props, member: "PropertiesChanged", path: weight))
            _ = try await h.call(weight, SimHarness.chr, "StartNotify")
            let got = try await collect(values, 1, "the weight indication") { valueBytes($0) != nil }.compactMap(valueBytes)
            // Flags 0x09 (imperial, BMI and height), 18128 × 0.01 lb, BMI 25.9, 701 × 0.1 in.
            #expect(got == [[0x09, 0xD0, 0x46, 0x03, 0x01, 0xBD, 0x02]])
            #expect(h.sim.payloadLog.records(address: scale.address).map(\.bytes) == got)
            // It shows the result, then sleeps: the link drops and it stops advertising.
            try await eventually("the scale drops its link") {
                try await h.get(device, "org.bluez.Device1", "Connected") == .bool(false)
            }
        }
    }
}
