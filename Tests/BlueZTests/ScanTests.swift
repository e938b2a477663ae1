import BlegateTestSupport
import BlueZ
import DBus
import Dispatch
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Advertisement parsing")
struct AdvertisementTests {
    static let hr = BluetoothUUID.from16(0x180D)

    func device(_ address: String = "A0:9E:1A:00:00:01", type: String? = "public", uuids: [String] = [],
                appearance: UInt16? = nil, manufacturer: [UInt16: [UInt8]] = [:], service: [String: [UInt8]] = [:]) -> Device {
        var d = Device(path: DBusObjectPath("/org/bluez/hci0/dev_" + address.replacingOccurrencesOfColon())!)
        d.address = address
        d.addressType = type
        d.uuids = uuids
        d.appearance = appearance
        d.manufacturerData = manufacturer
        d.serviceData = service
        return d
    }

    @Test("address kinds: public, and random told apart by the top two bits")
    func addressKinds() {
        #expect(AddressKind(addressType: "public", address: "A0:9E:1A:00:00:01") == .public)
        #expect(AddressKind(addressType: "random", address: "C0:D4:4C:24:22:A1") == .randomStatic)
        #expect(AddressKind(addressType: "random", address: "FF:00:00:00:00:01") == .randomStatic)
        #expect(AddressKind(addressType: "random", address: "4A:12:34:56:78:9A") == .resolvablePrivate)
        #expect(AddressKind(addressType: "random", address: "7F:12:34:56:78:9A") == .resolvablePrivate)
        #expect(AddressKind(addressType: "random", address: "12:34:56:78:9A:BC") == .nonResolvablePrivate)
        #expect(AddressKind(addressType: "random", address: "80:34:56:78:9A:BC") == .random)
        #expect(AddressKind(addressType: "random", address: "") == .random)
        #expect(AddressKind(addressType: nil, address: "12:34:56:78:9A:BC") == .unknown)
    }

    @Test("heart-rate and fitness devices by service or appearance; others are not")
    func fitnessFilter() {
        for short: UInt16 in [0x180D, 0x1826, 0x1816, 0x1818, 0x1814] {
            #expect(Advertisement(device: device(uuids: [BluetoothUUID.from16(short)])).isFitness, "\(short)")
        }
        for appearance: UInt16 in [0x0340, 0x0341, 0x00C0, 0x00C1, 0x00C2] {
            #expect(Advertisement(device: device(appearance: appearance)).isFitness, "\(appearance)")
        }
        #expect(!Advertisement(device: device(uuids: [BluetoothUUID.from16(0x180F)], appearance: 0x0342)).isFitness)
        #expect(!Advertisement(device: device(appearance: 0x00C3)).isFitness)
        #expect(!Advertisement(device: device(uuids: ["0000fe9f-0000-1000-8000-00805f9b34fb"])).isFitness)
        #expect(!Advertisement(device: device()).isFitness)
    }

    @Test("battery from Battery Service data: one byte, percent")
    func battery() {
        let b = BluetoothUUID.from16(0x180F)
        #expect(Advertisement(device: device(service: [b: [87]])).battery == 87)
        #expect(Advertisement(device: device(service: [b: [101]])).battery == nil)
        #expect(Advertisement(device: device(service: [b: [50, 1]])).battery == nil)
        #expect(Advertisement(device: device(service: [b: []])).battery == nil)
        var connected = device()
        connected.batteryPercentage = 64
        #expect(Advertisement(device: connected).battery == 64)
    }

    @Test("Polar heart rate: 4-byte block shows the slow average, 3-byte the only one")
    func polarBlocks() throws {
        // flags: contact (bit 1), counter 3 (bits 2-4); 5 kHz code; fast 70; slow 72.
        let four = try #require(PolarHeartRate(manufacturerData: [0x0E, 0x1E, 70, 72]))
        #expect(four.heartRate == 72)
        #expect(four.fastAverage == 70)
        #expect(four.sensorContact)
        #expect(four.frameCounter == 3)
        #expect(!four.batteryStatusBit)
        let three = try #require(PolarHeartRate(manufacturerData: [0x01, 0x00, 65]))
        #expect(three.heartRate == 65)
        #expect(three.batteryStatusBit)
        #expect(!three.sensorContact)
    }

    @Test("Polar heart rate after a GPB block is found; short or GPB-only payloads give none")
    func polarSequence() throws {
        // A GPB block (bit 6 set, length 6) then a 3-byte heart rate block, as an OH1 sends.
        let mixed = try #require(PolarHeartRate(manufacturerData: [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00, 0x33, 0x00, 0x3C]))
        #expect(mixed.heartRate == 60)
        #expect(PolarHeartRate(manufacturerData: [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00]) == nil)
        #expect(PolarHeartRate(manufacturerData: [0x02, 0x00]) == nil)
        #expect(PolarHeartRate(manufacturerData: []) == nil)
        #expect(PolarHeartRate(manufacturerData: [0x40]) == nil)
    }

    @Test("Advertisement shows Polar heart rate only for company 0x006B and only when not zero")
    func polarOnDevice() {
        #expect(Advertisement(device: device(manufacturer: [0x006B: [0x02, 0x00, 80, 81]])).polar?.heartRate == 81)
        #expect(Advertisement(device: device(manufacturer: [0x0087: [0x02, 0x00, 80, 81]])).polar == nil)
        #expect(Advertisement(device: device(manufacturer: [0x006B: [0x00, 0x00, 0, 0]])).polar == nil)
        // A Polar heart-rate broadcast alone makes a device a fitness device.
        #expect(Advertisement(device: device(manufacturer: [0x006B: [0x02, 0x00, 80, 81]])).isFitness)
    }

    @Test("RSSI 127 (not available, as virtual controllers report it) shows as unknown")
    func rssiNotAvailable() {
        var d = device()
        d.rssi = 127
        #expect(Advertisement(device: d).rssi == nil)
        d.rssi = -61
        #expect(Advertisement(device: d).rssi == -61)
    }

    @Test("connectable is known only once the device has been connected")
    func connectable() {
        var d = device()
        #expect(Advertisement(device: d).connectable == nil)
        d.connected = true
        #expect(Advertisement(device: d).connectable == true)
    }
}

extension String {
    fileprivate func replacingOccurrencesOfColon() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}

/// The real `blegate scan` binary against the simulator on a private bus.
@Suite("blegate scan as a command", .serialized)
struct ScanCommandTests {
    static var binary: String { BlegateBinary.path }

    static func shell(_ command: String) async -> (out: String, status: Int32) {
        await BlegateTestSupport.shell(command)
    }

    static func withSimulator(straps: Int, watches: Int = 0, _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
        try await withSimulatorOnPrivateBus({ c in
            c.straps = straps
            c.watches = watches
            c.seed = 11
        }, body)
    }

    /// Last JSON line per address: the fields the test checks, by plain string search
    /// (no Foundation in the tests either).
    static func lines(_ out: String) -> [String: String] {
        var byAddress: [String: String] = [:]
        for line in out.split(separator: "\n") where line.hasPrefix("{") {
            guard let key = line.firstRange(of: "\"address\":\"") else { continue }
            byAddress[String(line[key.upperBound...].prefix(17))] = String(line)
        }
        return byAddress
    }

    @Test("--json finds every virtual strap with its address, name, type and UUIDs; exit 0 at --timeout")
    func findsEveryStrap() async throws {
        try await Self.withSimulator(straps: 6, watches: 1) { bus, sim in
            let (out, status) = await Self.shell("'\(Self.binary)' scan --bus '\(bus.address)' --json --timeout 5")
            #expect(status == 0, "\(out)")
            let seen = Self.lines(out)
            #expect(sim.devices.count == 7)
            for d in sim.devices {
                let line = try #require(seen[d.address], "\(d.name) \(d.address) not found in:\n\(out)")
                #expect(line.contains("\"name\":\"\(d.name)\""), "\(line)")
                let kind = d.addressType == "public" ? "public" : "random-static"
                #expect(line.contains("\"address_type\":\"\(kind)\""), "\(line)")
                #expect(line.contains("\"adapter\":\"hci0\""), "\(line)")
                #expect(line.contains("\"rssi\":-"), "\(line)")
                for uuid in d.model.advertisedUUIDsForTest {
                    #expect(line.contains(uuid), "\(uuid) missing: \(line)")
                }
            }
            #expect(seen.count == sim.devices.count, "\(out)")
        }
    }

    @Test("SIGINT and SIGTERM end a scan without --timeout with status 0")
    func signals() async throws {
        try await Self.withSimulator(straps: 2) { bus, _ in
            for sig in ["INT", "TERM"] {
                // Signalled once it has printed a sighting, so its handlers are installed.
                let script = """
                    out=$(mktemp); '\(Self.binary)' scan --bus '\(bus.address)' --json > "$out" 2>&1 & pid=$!
                    i=0; while ! grep -q address "$out"; do i=$((i+1)); [ $i -gt 600 ] && break; sleep 0.1; done
                    kill -\(sig) $pid; wait $pid; echo exit=$?; rm -f "$out"
                    """
                let (out, _) = await Self.shell(script)
                #expect(out.contains("exit=0"), "SIG\(sig): \(out)")
            }
        }
    }

    @Test("no org.bluez on the bus: exit 3 and the fix on stderr")
    func noBluetoothd() async throws {
        try #require(access(Self.binary, X_OK) == 0)
        let bus = try PrivateBus.start()
        defer { bus.stop() }
        let (out, status) = await Self.shell("'\(Self.binary)' scan --bus '\(bus.address)' --json --timeout 5 2>&1")
        #expect(status == 3, "\(out)")
        #expect(out.contains("bluetoothd is not running"), "\(out)")
        #expect(out.contains("systemctl start bluetooth"), "\(out)")
    }

    @Test("adapter powered off: exit 5 and the fix on stderr")
    func poweredOff() async throws {
        try await Self.withSimulator(straps: 1) { bus, sim in
            try await sim.setAdapterPowered(0, false)
            let (out, status) = await Self.shell("'\(Self.binary)' scan --bus '\(bus.address)' --json --timeout 5 2>&1")
            #expect(status == 5, "\(out)")
            #expect(out.contains("powered off"), "\(out)")
            #expect(out.contains("bluetoothctl power on"), "\(out)")
        }
    }

    @Test("unknown --adapter: exit 4; unreachable bus: exit 2")
    func noAdapterAndNoBus() async throws {
        try await Self.withSimulator(straps: 1) { bus, _ in
            let (out, status) = await Self.shell("'\(Self.binary)' scan --bus '\(bus.address)' --adapter hci7 --timeout 5 2>&1")
            #expect(status == 4, "\(out)")
            #expect(out.contains("hci7"), "\(out)")
        }
        let (out, status) = await Self.shell("'\(Self.binary)' scan --bus 'unix:path=/nonexistent/blegate-bus' --timeout 5 2>&1")
        #expect(status == 2, "\(out)")
    }

    @Test("option errors exit 64 with the usage line; help exits 0; the same in blegate-stream and in blegate")
    func commandLine() async throws {
        let dir = String(Self.binary[..<Self.binary.lastIndex(of: "/")!])
        let runs = ["'\(dir)/blegate-stream'", "BLEGATE_IN_PROCESS=1 '\(Self.binary)'", "'\(Self.binary)'"]
        for run in runs {
            var (out, status) = await Self.shell("\(run) scan --timeout 0 2>&1")
            #expect(status == 64 && out.contains("Error: --timeout must be positive") && out.contains("Usage: blegate scan"), "\(run): \(out)")
            (out, status) = await Self.shell("\(run) stream --device 2>&1")
            #expect(status == 64 && out.contains("Missing value for '--device <ADDR|NAME>'"), "\(run): \(out)")
            (out, status) = await Self.shell("\(run) stream --device X --speed 3 2>&1")
            #expect(status == 64 && out.contains("Unknown option '--speed'"), "\(run): \(out)")
            (out, status) = await Self.shell("\(run) stream --help")
            #expect(status == 0 && out.contains("--gather-ms <MS>") && out.contains("OVERVIEW: Connect to heart-rate straps"), "\(run): \(out)")
            (out, status) = await Self.shell("\(run) help scan")
            #expect(status == 0 && out.contains("--json") && out.contains("USAGE: blegate scan"), "\(run): \(out)")
        }
        // blegate's own list names both.
        let (out, status) = await Self.shell("'\(Self.binary)' --help")
        #expect(status == 0 && out.contains("scan") && out.contains("Connect to heart-rate straps"), "\(out)")
    }
}

extension DeviceModel {
    /// What docs/simulator.md says each model advertises.
    var advertisedUUIDsForTest: [String] {
        switch self {
        case .polarH10: [BluetoothUUID.from16(0x180D), BluetoothUUID.from16(0xFEEE)]
        case .wahooTickr, .coospoH6: [BluetoothUUID.from16(0x180D), BluetoothUUID.from16(0x180F)]
        case .garminHRMPro, .garminForerunner255: [BluetoothUUID.from16(0x180D)]
        case .polarBroadcast: [BluetoothUUID.from16(0xFEEE)]
        case .scale: [BluetoothUUID.from16(0x181D), BluetoothUUID.from16(0x181B)]
        }
    }
}
