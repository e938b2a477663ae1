import DBus
import Glibc
import Testing

@Suite("Every D-Bus type survives a round trip through a real dbus-daemon")
struct ValueRoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0), .byte(255), .bool(true), .bool(false),
        .int16(-32768), .uint16(65535), .int32(-2_147_483_648), .uint32(4_294_967_295),
        .int64(Int64.min), .uint64(UInt64.max), .double(-1.5e300), .double(0),
        .string(""), .string("Polar H10 8C4F2A1B — ünïcödé ❤️"), .string("quote ' and \\ backslash"),
        .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"), .objectPath("/"),
        .signature("a{oa{sa{sv}}}"), .signature(""),
        .bytes([]), .bytes([0x16, 0x48, 0x10, 0x03, 0x18, 0x03]), .bytes(Array(0...255)),
        .array(element: "s", []), .strings(["0000180d-0000-1000-8000-00805f9b34fb", "0000180f-0000-1000-8000-00805f9b34fb"]),
        .array(element: "ai", [.array(element: "i", [.int32(1), .int32(2)]), .array(element: "i", [])]),
        .array(element: "v", [.variant(.int32(1)), .variant(.string("x"))]),
        .properties([]),
        .properties([("Name", .string("TICKR 1A2B")), ("RSSI", .int16(-61)), ("UUIDs", .strings(["180d"])),
                     ("ManufacturerData", .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(0x006B), .variant(.bytes([0x33, 0x1E, 0x33])))]))]),
        .dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictEntry(.objectPath("/org/bluez/hci0"), .dictionary(key: "s", value: "a{sv}", [
                DBusDictEntry(.string("org.bluez.Adapter1"), .properties([("Powered", .bool(true)), ("Address", .string("00:AA:01:00:00:00"))])),
            ])),
        ]),
        .dictionary(key: "o", value: "a{sa{sv}}", []),
        .struct([.int32(7), .string("s"), .struct([.double(1), .bytes([1])])]),
        .variant(.variant(.variant(.uint16(0x2A37)))),
        .variant(.properties([("nested", .variant(.array(element: "v", [.variant(.bytes([9]))])))])),
    ]

    @Test("values echo back identically", arguments: samples)
    func echo(value: DBusValue) async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Echo", in: [DBusArgument("v", value.signature)], out: [DBusArgument("v", value.signature)]) { inv in inv.arguments },
        ])])
        let reply = try await t.client.call(destination: t.server.uniqueName, path: "/test", interface: "org.blegate.Test1", member: "Echo", [value])
        #expect(reply == [value])
        #expect(reply.first?.signature == value.signature)
    }

    @Test("several arguments at once keep order and types")
    func manyArguments() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        let sig = DBusSignature(Self.samples.map(\.signature.rawValue).joined())!
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Echo", in: [DBusArgument("v", sig)]) { inv in inv.arguments },
        ])])
        let reply = try await t.client.call(destination: t.server.uniqueName, path: "/test", interface: "org.blegate.Test1", member: "Echo", Self.samples)
        #expect(reply == Self.samples)
    }

    @Test("a unix fd crosses the bus, arrives owned, and is closed exactly once")
    func unixFD() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let server = DBusObjectServer(connection: t.server)
        // The server hands back one end of a socket pair it keeps the other end of.
        let pair = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        defer { pair.deallocate() }
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, pair) == 0)
        let serverEnd = DBusFileDescriptor(owning: pair[0])
        let sentEnd = DBusFileDescriptor(owning: pair[1])
        try server.add("/test", [DBusInterface("org.blegate.Test1", methods: [
            DBusMethod("Acquire", out: [DBusArgument("fd", "h"), DBusArgument("mtu", "q")]) { _ in [.unixFD(sentEnd), .uint16(517)] },
        ])])
        let reply = try await t.client.call(destination: t.server.uniqueName, path: "/test", interface: "org.blegate.Test1", member: "Acquire")
        guard case .unixFD(let received)? = reply.first else {
            Issue.record("no fd in \(reply)")
            return
        }
        #expect(reply.last == .uint16(517))
        let fd = received.rawValue
        #expect(fd >= 0)
        #expect(fd != sentEnd.rawValue)  // a fresh descriptor, owned by the receiver
        let payload: [UInt8] = [0x06, 0x48]
        #expect(write(serverEnd.rawValue, payload, 2) == 2)
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = read(fd, &buffer, 16)
        #expect(n == 2)
        #expect(Array(buffer[0..<2]) == payload)
        // Closing is idempotent; afterwards the raw descriptor is gone.
        received.close()
        received.close()
        #expect(received.rawValue == -1)
        #expect(fcntl(fd, F_GETFD) == -1)
        // take() moves ownership: the object no longer closes it.
        let other = DBusFileDescriptor(owning: dup(serverEnd.rawValue))
        let taken = other.take()
        #expect(taken != nil)
        #expect(other.take() == nil)
        if let taken {
            #expect(fcntl(taken, F_GETFD) != -1)
            close(taken)
        }
    }

    @Test("invalid values are refused with InvalidArgs, not an abort")
    func invalidValues() async throws {
        let t = try await TestBus.start()
        defer { t.stop() }
        let bad: [DBusValue] = [
            .string("nul\u{0}inside"),
            .array(element: "s", [.int32(1)]),
            .dictionary(key: "as", value: "v", []),
            .struct([]),
        ]
        for value in bad {
            await #expect(throws: DBusError.self) {
                try await t.client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId", [value])
            }
        }
        await #expect(throws: DBusError.self) {
            try await t.client.call(destination: "not a bus name", path: "/", interface: "x.y", member: "Z")
        }
        // A literal goes through init(stringLiteral:); runtime strings through the failable init.
        #expect(DBusObjectPath(String("/a//b")) == nil)
        #expect(DBusObjectPath(String("/a/b/")) == nil)
        #expect(DBusObjectPath(String("a/b")) == nil)
        #expect(DBusObjectPath(String("/a-b")) == nil)
        #expect(DBusObjectPath(String("/org/bluez/hci0")) != nil)
        #expect(DBusSignature(String("a{")) == nil)
        #expect(DBusSignature(String("a{sv}")) != nil)
    }
}
