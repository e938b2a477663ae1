// SPDX-License-Identifier: MIT
import ArgumentParser
import Config
import DBus
import StrapLinks
import SystemSupport
import BlegateRun
import ScanStreamCommands
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `blegate run`: the gateway service (what systemd starts).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway: every strap into the local cache, and from there to the backend.",
        discussion: """
            Reads the configuration (--config, default \(GatewayConfiguration.defaultPath); \
            without --config a missing default file means the defaults: every heart-rate \
            device, cache only). Logs go to stdout (journald under systemd); a line with \
            "ready:" says the gateway is up. SIGTERM or SIGINT: notifications are released, \
            straps disconnected, the cache flushed, sync makes a last pass, exit 0. Exit \
            status: 78 configuration error, 1 cache or status socket unusable. See docs/run.md.
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(help: "Bus: system (honours DBUS_SYSTEM_BUS_ADDRESS) or a D-Bus address (the simulator's).")
    var bus = "system"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: "Cache group commit interval in milliseconds: the most a received record waits before it is on disk, and the most a power cut loses (docs/run.md).")
    var commitInterval: Int = 1000

    func validate() throws {
        guard (1...5000).contains(commitInterval) else { throw ValidationError("--commit-interval must be from 1 to 5000 ms, got \(commitInterval)") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        MallocTuning.limitArenas()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "blegate")
        let config = try gateway.loadForRun()
        let address: DBusBusAddress = bus == "system" ? .system : .address(bus)
        let runtime: GatewayRuntime
        do {
            runtime = try GatewayRuntime(configuration: config, bus: address, logger: logger, commitInterval: .milliseconds(commitInterval))
        } catch {
            printError("blegate run: \(error.message)")
            throw ExitCode(error.isConfiguration ? 78 : 1)
        }
        do {
            try await runtime.run()
        } catch {
            printError("blegate run: \(error)")
            throw ExitCode(1)
        }
    }
}
