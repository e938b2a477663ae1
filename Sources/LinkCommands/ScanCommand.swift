import BlueZ
import DBus
import GATT
import Synchronization
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// `blegate scan`: LE discovery with duplicate reports on, so RSSI and advertised
/// heart rate stay live, shown as a table or as JSON lines. Built on `BlueZMirror`:
/// the scan only starts discovery and reads what the mirror keeps.
public struct ScanCommand: LinkCommand {
    public static let name = "scan"
    public static let abstract = "Discover BLE heart-rate and fitness devices and show them live."
    public static let discussion = """
        Exit status: 0 done (timeout or Ctrl-C), 2 bus unreachable, 3 bluetoothd not \
        running, 4 no such adapter, 5 adapter powered off, 6 adapter blocked by rfkill, \
        7 discovery refused.
        """
    public static let options: [LinkOption] = [
        .value("adapter", "hciN", help: "Adapter to scan with (hci0...); default: the first powered one."),
        .value("timeout", "S", help: "Stop after S seconds; default: until Ctrl-C."),
        .flag("json", help: "Print one JSON object per line for every sighting and update."),
        .flag("all", help: "Show every device, not only heart-rate and fitness devices."),
        .value("bus", "BUS", help: "Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address (default: system)."),
    ]

    let adapter: String?
    let timeout: Double?
    let json: Bool
    let all: Bool
    let bus: String

    public init(_ arguments: LinkArguments) throws(LinkUsageError) {
        adapter = arguments.string("adapter")
        timeout = try arguments.double("timeout")
        json = arguments.flag("json")
        all = arguments.flag("all")
        bus = arguments.string("bus") ?? "system"
        if let timeout, timeout <= 0 { throw LinkUsageError("--timeout must be positive") }
    }

    public func run() async -> Int32 {
        await ScanFailure.reported("scan") { try await scan() }
    }

    private func scan() async throws {
        let connection = try await BluetoothPreflight.connect(bus)
        let mirror = BlueZMirror(connection: connection)
        let events = mirror.events()
        defer { mirror.stop() }
        try await BluetoothPreflight.start(mirror, bus: bus)
        // --adapter, else the first powered adapter.
        let chosen = try BluetoothPreflight.poweredAdapters(mirror.snapshot, named: adapter, bus: bus)[0]

        let client = ScanClient(connection: connection, adapter: chosen)
        try await client.startDiscovery()
        let output = ScanOutput(json: json, all: all, adapter: chosen.interfaceName)
        // Devices bluetoothd already knew arrive as the stream's first deviceAdded events.

        let signals = await SignalWaiter.install()
        let result = await withTaskGroup(of: ScanFailure?.self) { group -> ScanFailure? in
            group.addTask { await signals.wait(); return nil }
            if let timeout {
                group.addTask { try? await Task.sleep(for: .seconds(timeout)); return nil }
            }
            if !json {
                group.addTask { await output.redrawLoop(); return nil }
            }
            group.addTask {
                for await event in events {
                    if let failure = output.handle(event, adapter: chosen.path) { return failure }
                }
                return Task.isCancelled ? nil : ScanFailure(exit: .bluetoothdNotRunning, message: "lost the bus")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if result == nil { await client.stopDiscovery() }
        if !json { output.draw(final: true) }
        if let result { throw result }
    }
}

/// The adapter calls the scan makes.
struct ScanClient: Sendable {
    let connection: DBusConnection
    let adapter: Adapter

    func startDiscovery() async throws {
        let name = adapter.interfaceName
        do {
            // DuplicateData: every advertisement updates RSSI (and advertised data),
            // not only the first per device.
            _ = try await call("SetDiscoveryFilter", [.properties([("Transport", .string("le")), ("DuplicateData", .bool(true))])])
            _ = try await call("StartDiscovery")
        } catch {
            if error.is(.serviceUnknown) || error.is(.nameHasNoOwner) {
                throw ScanFailure(exit: .bluetoothdNotRunning, message: "bluetoothd is not running: sudo systemctl start bluetooth")
            }
            if error.name == "org.bluez.Error.NotReady" {
                throw ScanFailure(exit: .poweredOff, message: "\(name) is powered off: bluetoothctl power on")
            }
            if error.message.lowercased().contains("rfkill") {
                throw ScanFailure(exit: .blocked, message: "\(name) is blocked by rfkill: rfkill unblock bluetooth")
            }
            if error.name == "org.freedesktop.DBus.Error.UnknownObject" || error.name == "org.freedesktop.DBus.Error.UnknownMethod" {
                throw ScanFailure(exit: .noAdapter, message: "\(name) went away")
            }
            throw ScanFailure(exit: .discoveryFailed, message: "\(name) refused discovery: \(error)")
        }
    }

    func stopDiscovery() async {
        _ = try? await call("StopDiscovery")
    }

    private func call(_ member: String, _ args: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await connection.call(destination: BlueZMirror.busName, path: adapter.path, interface: "org.bluez.Adapter1",
                                  member: member, args, timeout: .seconds(10))
    }
}

/// What an adapter's rfkill switch says, from sysfs. Only meaningful for the real
/// system bus: a simulated adapter has no switch.
enum RFKill {
    struct State { var soft: Bool; var hard: Bool; var blocked: Bool { soft || hard } }

    static func state(of interface: String) -> State? {
        let dir = "/sys/class/bluetooth/\(interface)"
        guard let d = opendir(dir) else { return nil }
        defer { closedir(d) }
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("rfkill") else { continue }
            let soft = read("\(dir)/\(name)/soft") == "1"
            let hard = read("\(dir)/\(name)/hard") == "1"
            return State(soft: soft, hard: hard)
        }
        return nil
    }

    private static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var buf = [CChar](repeating: 0, count: 16)
        guard fgets(&buf, Int32(buf.count), f) != nil else { return nil }
        let n = strlen(buf)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingNewline()
    }
}

extension String {
    func trimmingNewline() -> String {
        var s = self
        while s.last == "\n" || s.last == " " { s.removeLast() }
        return s
    }
}
