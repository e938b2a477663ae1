import ArgumentParser
import LinkCommands
import DBus
import Simulator
#if canImport(Glibc)
import Glibc
#endif

/// `blegate simulate`: a BlueZ 5.66 stand-in with virtual straps, for development,
/// end-to-end tests and benchmarks without radios. See docs/simulator.md.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Serve a simulated BlueZ (org.bluez) with virtual straps.")

    @Flag(help: "Start a private dbus-daemon and serve on it; the first stdout line is DBUS_SYSTEM_BUS_ADDRESS=<address>.")
    var privateBus = false

    @Option(help: "Bus to serve on: system, session, or a D-Bus address.")
    var bus = "system"

    @Option(help: "Number of adapters (hci0...).")
    var adapters = 1

    @Option(help: "Number of chest straps.")
    var straps = 5

    @Option(help: "Number of watches in HR-broadcast mode.")
    var watches = 0

    @Option(help: "Seed: the same seed gives the same devices and payloads.")
    var seed: UInt64 = 1

    @Option(help: "Heart Rate notifications per second per device.")
    var rate = 1.0

    @Option(help: "bluetoothd [GATT] Cache mode: always or no.")
    var gattCache = "always"

    @Option(help: "Write every sent payload to this file (JSON lines).")
    var payloadLog: String?

    @Option(help: "Probability that a Connect fails with le-connection-abort-by-local.")
    var connectFailRate = 0.0

    @Option(help: "The first N Connect attempts fail.")
    var connectFailNext = 0

    @Option(help: "Fraction of Heart Rate notifications replaced by malformed payloads.")
    var malformedRate = 0.0

    @Option(help: "Drop the link of one connected device every S seconds.")
    var linkLossEvery: Double?

    @Option(help: "Seconds before unconnected devices not seen any more are removed (BlueZ TemporaryTimeout).")
    var temporaryTimeout = 30.0

    @Option(help: "Simulate a bluetoothd restart every S seconds.")
    var restartEvery: Double?

    @Option(help: "Seconds the restarted bluetoothd stays away.")
    var restartDelay = 1.0

    @Option(help: "Exit after S seconds.")
    var duration: Double?

    @Flag(help: "Also run a client that connects to every strap and shows their heart rate live.")
    var live = false

    func validate() throws {
        guard SimulatorConfiguration.GattCache(rawValue: gattCache) != nil else {
            throw ValidationError("--gatt-cache must be 'always' or 'no'")
        }
        guard rate > 0 else { throw ValidationError("--rate must be positive") }
        guard (0...1).contains(malformedRate), (0...1).contains(connectFailRate) else {
            throw ValidationError("rates must be within 0...1")
        }
    }

    func run() async throws {
        var config = SimulatorConfiguration()
        config.adapters = adapters
        config.straps = straps
        config.watches = watches
        config.seed = seed
        config.rate = rate
        config.gattCache = SimulatorConfiguration.GattCache(rawValue: gattCache) ?? .always
        config.payloadLogPath = payloadLog
        config.connectFailRate = connectFailRate
        config.connectFailNext = connectFailNext
        config.malformedRate = malformedRate
        config.linkLossEvery = linkLossEvery
        config.temporaryTimeout = temporaryTimeout
        config.restartDelay = restartDelay

        var privateDaemon: PrivateBus?
        let address: DBusBusAddress
        if privateBus {
            let b = try PrivateBus.start()
            privateDaemon = b
            address = b.busAddress
            print("DBUS_SYSTEM_BUS_ADDRESS=\(b.address)")
            fflush(nil)
        } else {
            switch bus {
            case "system": address = .system
            case "session": address = .session
            default: address = .address(bus)
            }
        }
        defer { privateDaemon?.stop() }

        let sim = try SimulatedBlueZ(configuration: config, bus: address)
        try await sim.start()
        for d in sim.devices {
            print("device \(d.address) \(d.addressType) \(d.model.rawValue) \"\(d.name)\"")
        }
        print("ready: org.bluez with \(adapters) adapter(s), \(sim.devices.count) device(s), seed \(seed)")
        fflush(nil)

        let signals = await SignalWaiter.install()
        let restarter: Task<Void, Never>? = restartEvery.map { every in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(every))
                    await sim.restartDaemon()
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await signals.wait() }
            if let duration {
                group.addTask { try? await Task.sleep(for: .seconds(duration)) }
            }
            if live {
                group.addTask {
                    do {
                        let client = try await DBusConnection.connect(address)
                        try await LiveView(connection: client).run()
                    } catch {
                        print("live view: \(error)")
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
        restarter?.cancel()
        await sim.stop()
        sim.payloadLog.close()
    }
}
