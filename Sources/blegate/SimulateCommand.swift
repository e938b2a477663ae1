import ArgumentParser
import ScanStreamCommands
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

    @Option(help: ArgumentHelp(
        "Exactly N of the straps carry heart rate in their advertisements (Polar H10, or the broadcast-only model); the rest are Garmin HRM-Pro, Wahoo TICKR and COOSPO H6 in turn, and their heart rates follow the wall clock.",
        valueName: "N"))
    var advertising: Int?

    @Option(help: ArgumentHelp(
        "M of the --advertising straps can only be heard, never connected (polar-broadcast, \"Polar H9 ...\").",
        valueName: "M"))
    var advertisingOnly = 0

    @Option(help: ArgumentHelp(
        "LE links each adapter's controller holds, in adapter order (0: no limit); a Connect beyond it fails with le-connection-abort-by-local.",
        valueName: "N,N,..."))
    var linkLimits: String?

    @Option(help: ArgumentHelp(
        "Unplug adapter A at T seconds after start and plug it back F seconds later (A@T without +F: for good). Repeatable.",
        valueName: "A@T+F"))
    var unplug: [String] = []

    @Option(help: "Number of watches in HR-broadcast mode.")
    var watches = 0

    @Option(help: "Number of scales (Weight Scale and Body Composition services); silent until stepped on (StepOn).")
    var scales = 0

    @Option(help: ArgumentHelp(
        "N foreign devices (phones, beacons: no heart rate) appear on the first adapter at start, as a busy street puts them on the bus; the control interface adds and removes more (AddNoiseDevices, RemoveNoiseDevices).",
        valueName: "N"))
    var noiseDevices = 0

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
        guard (0...100_000).contains(noiseDevices) else { throw ValidationError("--noise-devices must be within 0...100000") }
        guard (0...1).contains(malformedRate), (0...1).contains(connectFailRate) else {
            throw ValidationError("rates must be within 0...1")
        }
        do {
            try configuration().validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The simulator configuration these flags describe.
    func configuration() throws(SimulatorError) -> SimulatorConfiguration {
        var config = SimulatorConfiguration()
        config.adapters = adapters
        config.straps = straps
        config.watches = watches
        config.scales = scales
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
        config.advertising = advertising
        config.advertisingOnly = advertisingOnly
        config.linkLimits = try linkLimits.map(SimulatorConfiguration.parseLinkLimits) ?? []
        config.unplugs = try unplug.map { text throws(SimulatorError) in try AdapterUnplug(parsing: text) }
        return config
    }

    func run() async throws {
        let config = try configuration()

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
        if noiseDevices > 0 { await sim.addNoiseDevices(noiseDevices) }
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
