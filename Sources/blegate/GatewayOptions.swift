// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import BlegateRun
import ScanStreamCommands

/// `--config` and `--state-dir`, shared by every command that works on the gateway's
/// files. Without `--config`, a missing default file means the defaults, so the cache
/// commands work on a machine that was never configured.
struct GatewayOptions: ParsableArguments {
    @Option(help: "Configuration file (default: \(GatewayConfiguration.defaultPath); absent = defaults).")
    var config: String?

    @Option(name: .customLong("state-dir"), help: "Override gateway.state_directory (where the cache lives).")
    var stateDir: String?

    /// The configuration, or exit 78 (EX_CONFIG) with the config error.
    func load() throws -> GatewayConfiguration {
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
            printError("\(error)")
            throw ExitCode(1)
        }
    }
}
