import BlueZ
import DBus
import HCI

/// The checks every Bluetooth command makes before it starts, with one message and exit
/// status per thing a person can fix (`ScanExit`): shared by scan and stream.
enum BluetoothPreflight {
    static func address(_ bus: String) -> DBusBusAddress { bus == "system" ? .system : .address(bus) }

    /// `gatherSignals`: see `DBusConnection.connect(_:gatherSignals:)`.
    static func connect(_ bus: String, gatherSignals: Duration = .zero) async throws -> DBusConnection {
        let address = address(bus)
        do {
            return try await DBusConnection.connect(address, gatherSignals: gatherSignals)
        } catch {
            throw ScanFailure(exit: .busUnreachable, message: "cannot reach the \(address): \(error)")
        }
    }

    /// Starts the mirror and makes sure bluetoothd is there with its adapters.
    static func start(_ mirror: BlueZMirror, bus: String) async throws {
        do {
            try await mirror.start()
        } catch {
            throw ScanFailure(exit: error.is(.serviceUnknown) || error.is(.nameHasNoOwner) ? .bluetoothdNotRunning : .busUnreachable,
                              message: "cannot read bluetoothd's objects: \(error)")
        }
        guard mirror.isBlueZPresent else {
            throw ScanFailure(exit: .bluetoothdNotRunning,
                              message: "bluetoothd is not running (no owner of org.bluez on the \(address(bus))): sudo systemctl start bluetooth")
        }
        // bluetoothd can own its name a moment before it has added its adapters.
        _ = try? await mirror.waitUntil(timeout: .seconds(1)) { !$0.adapters.isEmpty }
    }

    /// The powered adapters to use: the one named, else every adapter. Fails when there
    /// is none, the named one is unknown, or none of them is powered (naming rfkill when
    /// that is why).
    static func poweredAdapters(_ snapshot: BlueZSnapshot, named name: String?, bus: String) throws -> [Adapter] {
        let adapters = snapshot.adapters
        guard !adapters.isEmpty else {
            throw ScanFailure(exit: .noAdapter, message: "no Bluetooth adapter: bluetoothd reports none (is the dongle plugged in? `btmgmt info`)")
        }
        var chosen = adapters
        if let name {
            guard let a = snapshot.adapter(named: name) else {
                throw ScanFailure(exit: .noAdapter, message: "no adapter \(name) (present: \(adapters.map(\.interfaceName).joined(separator: ", ")))")
            }
            chosen = [a]
        }
        let powered = chosen.filter(\.powered)
        guard powered.isEmpty else { return powered }
        let a = chosen[0]
        if bus == "system", let state = RFKillSwitch.of(a.interfaceName), state.blocked {
            throw ScanFailure(exit: .blocked, message: "\(a.interfaceName) is blocked by rfkill (\(state.hard ? "hard: a hardware switch" : "soft")): rfkill unblock bluetooth")
        }
        throw ScanFailure(exit: .poweredOff, message: "\(a.interfaceName) is powered off: bluetoothctl power on")
    }
}

extension ScanFailure {
    /// Runs `body` for `command` and returns its exit status, printing any failure:
    /// a `ScanFailure` with its own status, anything else with 1.
    static func reported(_ command: String, _ body: () async throws -> Void) async -> Int32 {
        do {
            try await body()
            return ScanExit.ok.rawValue
        } catch let failure as ScanFailure {
            printError("blegate \(command): " + failure.message)
            return failure.exit.rawValue
        } catch {
            printError("blegate \(command): \(error)")
            return 1
        }
    }
}
