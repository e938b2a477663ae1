import ArgumentParser
import BlueZ
import DBus
import GATT
import LinkPolicy
import Synchronization
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// `blegate scan`: LE discovery with duplicate reports on, so RSSI and advertised
/// heart rate stay live, shown as a table or as JSON lines. Built on `BlueZMirror`:
/// the scan only starts discovery and reads what the mirror keeps.
public struct ScanCommand: AsyncParsableCommand, Sendable {
    public static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Discover BLE heart-rate and fitness devices and show them live.",
        discussion: """
            Exit status: 0 done (timeout or Ctrl-C), 2 bus unreachable, 3 bluetoothd not \
            running, 4 no such adapter, 5 adapter powered off, 6 adapter blocked by rfkill, \
            7 discovery refused.
            """
    )

    @Option(help: ArgumentHelp("Adapter to scan with (hci0...); default: the first powered one.", valueName: "hciN"))
    var adapter: String?

    @Option(help: ArgumentHelp("Stop after S seconds; default: until Ctrl-C.", valueName: "S"))
    var timeout: Double?

    @Flag(help: "Print one JSON object per line for every sighting and update.")
    var json = false

    @Flag(help: "Show every device, not only heart-rate and fitness devices.")
    var all = false

    @Option(help: ArgumentHelp("Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address.", valueName: "BUS"))
    var bus = "system"

    public init() {}

    public func validate() throws {
        if let timeout, !(timeout > 0) || !timeout.isFinite { throw ValidationError("--timeout must be positive") }
    }

    public func run() async throws {
        try ScanExit.leave(await ScanFailure.reported("scan") { try await scan() })
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

/// The adapter calls the scan makes, and what their refusals mean for the person
/// running it (`ScanExit`), read by the one BlueZ error classifier.
struct ScanClient: Sendable {
    let adapter: BlueZAdapter
    let name: String

    init(connection: DBusConnection, adapter: Adapter) {
        self.adapter = BlueZAdapter(connection, adapter.path)
        name = adapter.interfaceName
    }

    func startDiscovery() async throws {
        do {
            // DuplicateData: every advertisement updates RSSI (and advertised data),
            // not only the first per device.
            try await adapter.setLEDiscoveryFilter(duplicateData: true)
            try await adapter.startDiscovery()
        } catch {
            throw Self.failure(error, adapter: name)
        }
    }

    func stopDiscovery() async {
        try? await adapter.stopDiscovery()
    }

    static func failure(_ error: DBusError, adapter name: String) -> ScanFailure {
        switch BlueZErrorKind.classify(name: error.name, message: error.message) {
        case .noBluetoothd:
            ScanFailure(exit: .bluetoothdNotRunning, message: "bluetoothd is not running: sudo systemctl start bluetooth")
        case .notReady:
            ScanFailure(exit: .poweredOff, message: "\(name) is powered off: bluetoothctl power on")
        case .rfkillBlocked:
            ScanFailure(exit: .blocked, message: "\(name) is blocked by rfkill: rfkill unblock bluetooth")
        case .doesNotExist:
            ScanFailure(exit: .noAdapter, message: "\(name) went away")
        default:
            ScanFailure(exit: .discoveryFailed, message: "\(name) refused discovery: \(error)")
        }
    }
}
