// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import BlegateRun
import ScanStreamCommands
import Sync

/// `blegate pair --device ADDR --code CODE`: a member's pairing code becomes the client
/// id their strap's records carry (GymDashSync's model).
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a device with a gym member through the backend's pairing code.",
        discussion: """
            Exchanges CODE at the backend (POST /api/v1/pair) for the member's client id and \
            stores it: through the running gateway when one answers on status.socket, else \
            in the cache directly. Records from then on carry the client id, and so do the \
            device's records still waiting in the cache without one. Exit status: 0 paired, \
            1 backend unreachable or failing, 2 unknown code, 3 code already used, 4 the \
            pairing could not be stored, 64 a short id that matches no device or several, \
            78 configuration error.
            """)

    @OptionGroup var gateway: GatewayOptions

    @Option(help: "The device's Bluetooth address (A0:9E:1A:12:34:56), or the short id the wall shows on a new strap's tile (its address's last four hex digits, 56AB); either in any letter case.")
    var device: String

    @Option(help: "The pairing code the member got from the gym's app, sent to the backend as typed (blegate-server ignores letter case).")
    var code: String

    func validate() throws {
        guard DevicePattern.isAddress(device) || Self.isShortID(device) else {
            throw ValidationError("--device must be a Bluetooth address like A0:9E:1A:12:34:56 or the wall's four-digit short id like 56AB, got \"\(device)\" (blegate devices lists them)")
        }
        guard !code.allSatisfy({ $0.isWhitespace && !$0.isNewline }) else { throw ValidationError("--code must not be empty") }
    }

    func run() async throws {
        let config = try gateway.load()
        let address: String
        if DevicePattern.isAddress(device) {
            address = device.uppercased()
        } else {
            address = try await resolveShortID(config)
        }
        guard let url = config.backend.url else {
            printError(ConfigError(.badValue, key: "backend.url", problem: "pairing needs the backend, and none is configured",
                                   example: "url = \"https://backend.example/\"").description)
            throw ExitCode(78)
        }
        let token = config.backend.tokenFile.map { TokenStore(file: $0) } ?? TokenStore(token: nil)
        do {
            try token.reload()
        } catch {
            printError("config error: " + error.message)
            throw ExitCode(78)
        }
        let client: BackendClient
        do {
            client = try BackendClient(baseURL: url, token: token, samplesPath: config.backend.samplesPath,
                                       requestTimeout: .seconds(20), connectTimeout: .seconds(10))
        } catch {
            printError("config error: " + error.message)
            throw ExitCode(78)
        }
        defer { Task { try? await client.shutdown() } }

        // Name and model from the registry, when the gateway has seen the device.
        let known = try? await knownDevice(config, address)
        let clientID: String
        do {
            clientID = try await client.pair(code: code, device: PairingDevice(address: address, name: known?.name, model: known?.model))
        } catch {
            printError("blegate pair: \(error.message)")
            try? await client.shutdown()
            switch error.kind {
            case .unknownCode: throw ExitCode(2)
            case .codeAlreadyUsed: throw ExitCode(3)
            case .tokenRefused: throw ExitCode(78)
            default: throw ExitCode(1)
            }
        }
        try? await client.shutdown()

        let assigned: Int
        do {
            assigned = try await store(config, address: address, clientID: clientID)
        } catch {
            printError("blegate pair: the backend paired \(address) (client id \(clientID)) but it could not be stored: \(error). Ask for a new code and pair again once the cache is writable.")
            throw ExitCode(4)
        }
        let name = known?.name.map { " (\($0))" } ?? ""
        print("paired \(address)\(name) with client id \(clientID)" + (assigned > 0 ? "; \(assigned) waiting record(s) assigned to the member" : ""))
    }

    static func isShortID(_ s: String) -> Bool {
        s.count == 4 && s.allSatisfy(\.isHexDigit)
    }

    /// The one device in the registry whose address ends with the short id; a clash (two
    /// straps in the registry with the same last digits) asks for the full address.
    private func resolveShortID(_ c: GatewayConfiguration) async throws -> String {
        let short = device.uppercased()
        let devices: [DeviceEntry]
        do {
            let key = try c.loadEncryptionKey()
            let cache = try RecordCache(path: c.cacheFilePath, options: CacheOptions(configuration: c, encryptionKey: key, create: false))
            devices = try await cache.devices()
        } catch {
            printError("blegate pair: cannot read the device registry to find \(short): \(error); give the full address")
            throw ExitCode(64)
        }
        let matches = devices.filter { $0.address.uppercased().filter(\.isHexDigit).hasSuffix(short) }
        guard matches.count == 1 else {
            printError(matches.isEmpty
                ? "blegate pair: no device the gateway has seen ends in \(short) (blegate devices lists them)"
                : "blegate pair: \(matches.count) devices end in \(short) (\(matches.map(\.address).joined(separator: ", "))); give the full address")
            throw ExitCode(64)
        }
        return matches[0].address.uppercased()
    }

    private func knownDevice(_ c: GatewayConfiguration, _ address: String) async throws -> DeviceEntry? {
        let key = try c.loadEncryptionKey()
        let cache = try RecordCache(path: c.cacheFilePath, options: CacheOptions(configuration: c, encryptionKey: key, create: false))
        return try await cache.device(address: address)
    }

    /// Through the running gateway (its cache tags new records in memory), else directly.
    private func store(_ c: GatewayConfiguration, address: String, clientID: String) async throws -> Int {
        do {
            let answer = try StatusClient.ask(c.status.socket, .pair(address: address, clientID: clientID))
            guard let reply = try? StatusAnswer(line: answer), reply.error == nil, let assigned = reply.assigned else {
                throw PairStoreError(description: "the running gateway answered: \(answer)")
            }
            return assigned
        } catch let error as StatusSocketError where error.nobodyListening {
            let key = try c.loadEncryptionKey()
            let cache = try RecordCache(path: c.cacheFilePath, options: CacheOptions(configuration: c, encryptionKey: key, create: true))
            let assigned = try await cache.pair(address: address, clientID: clientID)
            try await cache.close()
            return assigned
        }
    }
}

struct PairStoreError: Error, CustomStringConvertible {
    var description: String
}
