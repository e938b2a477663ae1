// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import BlegateRun
import ScanStreamCommands

/// `--config` and `--state-dir`, shared by every command that works on the gateway's
/// files. Without `--config`, `ConfigLookup` decides (`$BLEGATE_CONFIG`, the system's
/// file, the demo scripts/start.sh runs); with none of them, the defaults, so the cache
/// commands work on a machine that was never configured. `blegate run` reads only
/// `--config` or the system's file.
struct GatewayOptions: ParsableArguments {
    @Option(help: "Configuration file (default: $BLEGATE_CONFIG, else \(GatewayConfiguration.defaultPath), else the demo scripts/start.sh runs; none = defaults).")
    var config: String?

    @Option(name: .customLong("state-dir"), help: "Override gateway.state_directory (where the cache lives).")
    var stateDir: String?

    /// Which configuration `load()` reads, and why, for errors.
    var lookup: ConfigLookup {
        ConfigLookup.resolve(option: config, environment: ConfigLookup.processEnvironment())
    }

    /// The configuration `lookup` finds, or exit 78 (EX_CONFIG) with the config error.
    func load() throws -> GatewayConfiguration {
        let found = lookup
        do {
            var c = GatewayConfiguration()
            if let path = found.path { c = try GatewayConfiguration.load(path: path) }
            if let stateDir { c.gateway.stateDirectory = stateDir }
            return c
        } catch {
            printError(error.description + (found.source == .option ? "" : " (configuration: \(found.description))"))
            throw ExitCode(78)
        }
    }

    /// `--config` or the system's file (`blegate run`), or exit 78 with the config error.
    func loadForRun() throws -> GatewayConfiguration {
        do {
            var c = try GatewayConfiguration.loadOrDefaults(path: config)
            if let stateDir { c.gateway.stateDirectory = stateDir }
            return c
        } catch {
            printError(error.description)
            throw ExitCode(78)
        }
    }

    /// Opens the existing cache the configuration points at (exit 1 with the reason).
    func openCache(_ c: GatewayConfiguration) throws -> RecordCache {
        let key: [UInt8]?
        do {
            key = try c.loadEncryptionKey()
        } catch {
            printError(error.description)
            throw ExitCode(78)
        }
        do {
            return try RecordCache(path: c.cacheFilePath, options: CacheOptions(configuration: c, encryptionKey: key, create: false))
        } catch {
            printError("\(error) (configuration: \(lookup.description))")
            throw ExitCode(1)
        }
    }
}
