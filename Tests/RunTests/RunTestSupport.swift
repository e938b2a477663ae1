// SPDX-License-Identifier: MIT
import BlegateTestSupport
import DBus
import Foundation
import GATT
import GatewayService
import Simulator
import Testing
import TestBackend
import WearMetrics
#if canImport(Glibc)
import Glibc
#endif

/// A scratch state directory with a config file, a token file and a status socket path.
struct RunFixture {
    let dir: String
    var configPath: String { dir + "/blegate.toml" }
    var socketPath: String { dir + "/status.sock" }
    var tokenPath: String { dir + "/token" }
    var blegate: String { "'\(BlegateBinary.path)'" }

    static let token = "run-test-token-7d1e"

    init() throws {
        var template = Array("/tmp/blegate-run.XXXXXX".utf8CString)
        guard let d = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw TestSupportError("mkdtemp failed")
        }
        dir = d
    }

    /// Writes blegate.toml (and the token file, mode 0600, when a backend is given).
    func writeConfig(backendURL: String?, extra: String = "", backendExtra: String = "") throws {
        var toml = """
            [gateway]
            id = "test-gym"
            state_directory = "\(dir)"

            [status]
            socket = "\(socketPath)"

            """
        if let backendURL {
            try writeSecret(tokenPath, Self.token + "\n")
            toml += """

                [backend]
                url = "\(backendURL)"
                token_file = "\(tokenPath)"
                \(backendExtra)

                """
        }
        toml += extra
        // The wall's default port is the machine's, shared by every test: off unless asked for.
        if !extra.contains("[display]") { toml += "\n[display]\nlisten = \"\"\n" }
        try toml.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    func writeSecret(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
    }

    func run(bus: String) async throws -> BackgroundProcess {
        try await BackgroundProcess.start("\(blegate) run --config '\(configPath)' --bus '\(bus)'")
    }

    func cli(_ arguments: String) async -> (out: String, status: Int32) {
        await shell("\(blegate) \(arguments) --config '\(configPath)' 2>&1")
    }

    func status() async throws -> StatusReport {
        let (out, code) = await shell("\(blegate) status --json --config '\(configPath)'")
        #expect(code == 0, "status exit \(code): \(out)")
        return try StatusReport(json: out)
    }
}

extension BeatRecord {
    /// A stored backend record, if it is a heart-rate record.
    static func from(_ json: JSON) -> BeatRecord? {
        guard json["source"]?.string == "ble_hrm", json["meta"]?["hr_source"]?.string != "advertisement",
              let contact = json["meta"]?["sensor_contact"]?.string else { return nil }
        return BeatRecord(hr: json["metrics"]?["hr"]?.number, rr: json["rr_ms"]?.array?.compactMap(\.number) ?? [], contact: contact)
    }
}

/// Runs `body` with the simulator on a private bus (the shared harness).
func withSimulator(_ configure: (inout SimulatorConfiguration) -> Void,
                   _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
    try await withSimulatorOnPrivateBus(configure, body)
}

/// Waits until `condition` holds (checked every 200 ms); false after `timeout` seconds.
func eventually(timeout: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(200))
    }
    return try await condition()
}
