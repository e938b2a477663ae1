// SPDX-License-Identifier: MIT
import ArgumentParser
import Config
import DBus
import Doctor
#if canImport(Glibc)
import Glibc
import ScanStreamCommands
#endif

/// `blegate doctor`: everything that stands between a strap and the backend, checked
/// in the order a person would look, each with the fix in words they can act on.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check bluetoothd, adapters, permissions, main.conf, radio, backend, clock and disk.",
        discussion: """
            Prints one line per check (ok, warn or fail) and the fix under anything that \
            is not ok. With --config, the backend URL, token file, gateway id, state \
            directory and adapter_reset come from the gateway's configuration; flags given \
            explicitly win. Exit status: 0 when nothing fails, 1 otherwise, 78 when the \
            configuration file is wrong.
            """)

    @Option(help: "Gateway configuration to check against (e.g. \(GatewayConfiguration.defaultPath)).")
    var config: String?

    @Flag(help: "Print one JSON object: {\"checks\":[{name,status,message,fix}],ok,warn,fail}.")
    var json = false

    @Option(help: "Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address.")
    var bus = "system"

    @Option(help: "Backend base URL to check (POSTs an empty batch to /api/v1/metrics).")
    var backendURL: String?

    @Option(help: "File holding the backend's bearer token (mode 0600).")
    var tokenFile: String?

    @Option(help: "gateway_id sent in the probe; default: the host name.")
    var gatewayID: String?

    @Option(help: "bluetoothd's configuration file.")
    var mainConf = MainConfAdvice.defaultPath

    @Option(help: "Where the cache lives ([gateway] state_directory; default /var/lib/blegate).")
    var stateDirectory: String?

    @Flag(help: "Fail unless this process may reset adapters through HCI ([bluetooth] adapter_reset = true).")
    var adapterReset = false

    @Option(help: "Seconds to wait for the backend.")
    var backendTimeout: Int64 = 10

    func validate() throws {
        if let backendURL {
            if let problem = BackendProbe.validate(url: backendURL) { throw ValidationError("--backend-url " + problem) }
            if tokenFile == nil, config == nil { throw ValidationError("--backend-url needs --token-file FILE (the bearer token, mode 0600)") }
        }
        if backendTimeout <= 0 { throw ValidationError("--backend-timeout must be a positive number of seconds") }
    }

    /// The settings to check: explicit flags, else the configuration, else the defaults.
    struct Settings {
        var backendURL: String?
        var tokenFile: String?
        var gatewayID: String
        var stateDirectory: String
        var adapterReset: Bool
    }

    func settings() throws -> Settings {
        var s = Settings(backendURL: backendURL, tokenFile: tokenFile, gatewayID: gatewayID ?? DoctorHost.hostName(),
                         stateDirectory: stateDirectory ?? "/var/lib/blegate", adapterReset: adapterReset)
        guard let config else { return s }
        let c: GatewayConfiguration
        do {
            c = try GatewayConfiguration.load(path: config)
        } catch {
            printError(error.description)
            throw ExitCode(78)
        }
        s.backendURL = backendURL ?? c.backend.url
        s.tokenFile = tokenFile ?? c.backend.tokenFile
        s.gatewayID = gatewayID ?? c.gateway.id
        s.stateDirectory = stateDirectory ?? c.gateway.stateDirectory
        s.adapterReset = adapterReset || c.bluetooth.adapterReset
        return s
    }

    func run() async throws {
        let settings = try settings()
        let onSystemBus = bus == "system"
        let address: DBusBusAddress = onSystemBus ? .system : .address(bus)
        var report = DoctorReport()
        let files = HostFiles()

        let binary = BluetoothdBinary.paths.first { access($0, X_OK) == 0 }
        let version = binary.flatMap { DoctorHost.run([$0, "--version"])?.output }
        report.add(BluetoothdBinary.check(path: binary, versionOutput: version, onSystemBus: onSystemBus))

        let bus = await DoctorBusChecks(address: address, onSystemBus: onSystemBus).run()
        report.add(bus.checks)
        if bus.daemonRunning {
            report.add(BluetoothdPlugins.check(arguments: bus.daemonArguments))
        }
        report.add(DoctorKernelChecks.adapters(busAdapters: bus.adapters, onSystemBus: onSystemBus))
        report.add(MainConfAdvice.checks(text: files.read(mainConf), path: mainConf))
        report.add(DoctorKernelChecks.coexistence(adapters: bus.adapters, files: files))
        report.add(DoctorKernelChecks.adapterReset(required: settings.adapterReset))
        if let backendURL = settings.backendURL, let tokenFile = settings.tokenFile {
            report.add(await DoctorBackend.check(url: backendURL, tokenFile: tokenFile, gatewayID: settings.gatewayID, timeout: backendTimeout))
        } else if settings.backendURL != nil {
            report.add(.fail("backend token", "backend.url is set but backend.token_file is not: requests carry no token",
                             fix: "set [backend] token_file = \"/etc/blegate/token\" (mode 0600) or pass --token-file"))
        } else if config != nil {
            report.add(.warn("backend", "not checked: backend.url is not set in \(config!); records stay in the cache",
                             fix: "set [backend] url and token_file"))
        } else {
            report.add(.warn("backend", "not checked: no backend given; records stay in the cache",
                             fix: "blegate doctor --config /etc/blegate/blegate.toml (or --backend-url URL --token-file FILE)"))
        }
        report.add(ClockSync.check())
        report.add(DiskSpace.check(stateDirectory: settings.stateDirectory, available: DiskSpace.available(at: settings.stateDirectory)))

        print(json ? report.json() : report.text(), terminator: json ? "\n" : "")
        if report.hasFailures { throw ExitCode(1) }
    }
}
