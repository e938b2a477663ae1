import BlegateTestSupport
import DBus
import Simulator
import Testing

@Suite("Per-adapter link limits")
struct LinkLimitTests {
    static let refused = "le-connection-abort-by-local"

    func linkCounts(_ h: SimHarness) async throws -> [Int64] {
        try await h.control("LinkCounts").first?.arrayValue?.compactMap(\.integerValue) ?? []
    }

    @Test("A Connect beyond the adapter's limit fails as 5.66 reports a refused LE Create Connection; SetLinkLimit changes it")
    func limit() async throws {
        try await withSimulator({ $0.straps = 4; $0.linkLimits = [2] }) { h in
            let devices = try await h.discover(count: 4)
            #expect(try await h.controlProperty("LinkLimits")
                == .array(element: "u", [.uint32(2)]))
            try await h.connect(devices[0])
            try await h.connect(devices[1])
            #expect(try await linkCounts(h) == [2])
            await expectError("org.bluez.Error.Failed", message: Self.refused) {
                _ = try await h.call(devices[2], "org.bluez.Device1", "Connect")
            }
            #expect(try await h.get(devices[2], "org.bluez.Device1", "Connected") == .bool(false))
            #expect(try await linkCounts(h) == [2])

            _ = try await h.control("SetLinkLimit", [.uint32(0), .uint32(3)])
            try await h.connect(devices[2])
            #expect(try await linkCounts(h) == [3])

            // A lowered limit keeps the links there are and refuses new ones.
            _ = try await h.control("SetLinkLimit", [.uint32(0), .uint32(1)])
            #expect(try await linkCounts(h) == [3])
            await expectError("org.bluez.Error.Failed", message: Self.refused) {
                _ = try await h.call(devices[3], "org.bluez.Device1", "Connect")
            }
            for device in devices[1...2] { _ = try await h.call(device, "org.bluez.Device1", "Disconnect") }
            #expect(try await linkCounts(h) == [1])
            await expectError("org.bluez.Error.Failed", message: Self.refused) {
                _ = try await h.call(devices[3], "org.bluez.Device1", "Connect")
            }
            // 0 lifts it.
            _ = try await h.control("SetLinkLimit", [.uint32(0), .uint32(0)])
            try await h.connect(devices[3])
            #expect(try await linkCounts(h) == [2])
            await expectError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await h.control("SetLinkLimit", [.uint32(1), .uint32(3)])
            }
        }
    }

    @Test("Limits are per adapter: a full hci0 does not stop hci1; missing entries mean no limit")
    func perAdapter() async throws {
        try await withSimulator({ $0.straps = 3; $0.adapters = 2; $0.linkLimits = [1] }) { h in
            let hci1: DBusObjectPath = "/org/bluez/hci1"
            let on0 = try await h.discover(count: 3)
            _ = try await h.call(hci1, "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("3 devices on hci1") {
                try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.count == 3
            }
            let on1 = try await h.devicePaths().filter { $0.isDescendant(of: hci1) }.sorted()
            try await h.connect(on0[0])
            await expectError("org.bluez.Error.Failed", message: Self.refused) {
                _ = try await h.call(on0[1], "org.bluez.Device1", "Connect")
            }
            try await h.connect(on1[1])
            try await h.connect(on1[2])
            #expect(try await linkCounts(h) == [1, 2])
            #expect(try await h.controlProperty("LinkLimits")
                == .array(element: "u", [.uint32(1), .uint32(0)]))
        }
    }
}
