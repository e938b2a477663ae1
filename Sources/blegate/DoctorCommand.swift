// SPDX-License-Identifier: MIT
import ArgumentParser
import Config
import DBus
import Doctor
import HCI
#if canImport(Glibc)
import Glibc
import LinkCommands
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
        report.add(kernelChecks(busAdapters: bus.adapters, onSystemBus: onSystemBus))
        report.add(MainConfAdvice.checks(text: files.read(mainConf), path: mainConf))
        report.add(coexistence(adapters: bus.adapters, files: files))
        report.add(resetCheck(required: settings.adapterReset))
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

    /// The kernel's view (HCI ioctls, rfkill): only meaningful when the bus is this
    /// machine's system bus.
    private func kernelChecks(busAdapters: [String], onSystemBus: Bool) -> [DoctorCheck] {
        guard onSystemBus else {
            return [.warn("kernel adapters", "not checked: the adapters on a private bus (the simulator) are not this kernel's", fix: nil)]
        }
        let devices: [HCIDevice]
        do {
            devices = try HCIDevices.list()
        } catch {
            if error.errno == EAFNOSUPPORT {
                return [.fail("kernel adapters", "this kernel has no Bluetooth support (AF_BLUETOOTH unavailable)",
                              fix: "sudo modprobe bluetooth (and the adapter's driver: btusb for dongles, hci_uart on a Pi); on a Pi check that /boot/firmware/config.txt has no dtoverlay=disable-bt")]
            }
            return [.fail("kernel adapters", error.description, fix: "sudo modprobe bluetooth")]
        }
        if devices.isEmpty {
            return [.fail("kernel adapters", "the kernel knows no Bluetooth controller",
                          fix: "plug in a dongle (lsusb) or, on a Pi, enable the built-in radio (no dtoverlay=disable-bt; sudo systemctl enable --now hciuart)")]
        }
        var checks: [DoctorCheck] = []
        for device in devices {
            let name = "kernel \(device.name)"
            if device.isUp {
                checks.append(.ok(name, "\(device.address) up" + (device.isRunning ? ", running" : "")))
            } else {
                checks.append(.fail(name, "\(device.address) is down in the kernel",
                                    fix: "sudo rfkill unblock bluetooth; bluetoothctl power on; if it stays down, unplug and replug the adapter"))
            }
            if let rfkill = RFKillSwitch.of(device.name) {
                checks.append(rfkill.check(adapter: device.name))
            }
            if !busAdapters.isEmpty && !busAdapters.contains(device.name) {
                checks.append(.fail("bluetoothd \(device.name)", "the kernel has \(device.name) but bluetoothd does not show it",
                                    fix: "sudo systemctl restart bluetooth"))
            }
        }
        return checks
    }

    private func coexistence(adapters: [String], files: HostFiles) -> DoctorCheck {
        var links: [String: String?] = [:]
        if RadioCoexistence.piModel(files: files) != nil {
            for interface in RadioCoexistence.wifiInterfaces(files: files) {
                let run = DoctorHost.run(["iw", "dev", interface, "link"])
                links[interface] = run?.status == 0 ? run?.output : nil
            }
        }
        return RadioCoexistence.check(adapters: adapters, files: files, links: links)
    }

    private func resetCheck(required: Bool) -> DoctorCheck {
        let name = "adapter reset"
        let caps: ProcessCapabilities
        do {
            caps = try ProcessCapabilities.current()
        } catch {
            return .warn(name, error.message, fix: nil)
        }
        if caps.hasNetAdmin {
            return .ok(name, "CAP_NET_ADMIN held: a hung adapter can be reset through HCI")
        }
        let message = "CAP_NET_ADMIN not held: a hung adapter is only power-cycled through bluetoothd"
        let fix = "set [bluetooth] adapter_reset = true and run: sudo scripts/install.sh --adapter-reset"
        return required ? .fail(name, message, fix: fix) : .ok(name, message)
    }
}
