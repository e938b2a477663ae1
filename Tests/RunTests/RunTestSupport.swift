// SPDX-License-Identifier: MIT
import BackendContract
import BlegateTestSupport
import DBus
import Foundation
import GATT
import BlegateRun
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
        // So is the metrics port.
        if !extra.contains("[metrics]") { toml += "\n[metrics]\nlisten = \"\"\n" }
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

    /// Straps stop advertising and lose their links; returns once the gateway shows every
    /// strap disconnected (each link's queued notifications are read before its loss is
    /// handled) and nothing buffered, so every record it received is committed.
    func quiet(_ sim: SimulatedBlueZ) async throws {
        _ = await sim.stopAdvertising("*")
        _ = await sim.linkLoss("*")
        var last: StatusReport?
        let settled = await eventually(timeout: 60) {
            last = try? await status()
            guard let s = last else { return false }
            return s.devices.allSatisfy { !$0.connected } && s.outbox.buffered == 0
        }
        #expect(settled, "still connected or buffered: \(last?.json() ?? "no status")")
    }

    func status() async throws -> StatusReport {
        let (out, code) = await shell("\(blegate) status --json --config '\(configPath)'")
        #expect(code == 0, "status exit \(code): \(out)")
        return try StatusReport(json: out)
    }
}

extension BeatRecord {
    /// A stored backend record, if it is a heart-rate record.
    static func from(_ json: ContractValue) -> BeatRecord? {
        guard json["source"]?.string == "ble_hrm", json["meta"]?["hr_source"]?.string != "advertisement",
              let contact = json["meta"]?["sensor_contact"]?.string else { return nil }
        return BeatRecord(hr: json["metrics"]?["hr"]?.number, rr: json["rr_ms"]?.array?.compactMap(\.number) ?? [], contact: contact)
    }
}

/// Lets each strap in `addresses` (every strap unless told) send `count` more notifications:
/// the traffic a phase of a test runs on, however slow the machine.
func traffic(_ sim: SimulatedBlueZ, _ count: Int, from addresses: [String]? = nil) async throws {
    let straps = addresses ?? sim.devices.map(\.address)
    let before = straps.map { sim.payloadLog.records(address: $0).count }
    let sent = await eventually(timeout: 120) {
        zip(straps, before).allSatisfy { sim.payloadLog.records(address: $0).count >= $1 + count }
    }
    #expect(sent, "\(count) more notifications from each of \(straps.count) straps")
}

/// Lets the straps in `addresses` send `count` more notifications in all: traffic for a
/// phase in which any one of them may lose or give up its link meanwhile.
func traffic(_ sim: SimulatedBlueZ, inAll count: Int, from addresses: [String]) async throws {
    func total() -> Int { addresses.reduce(0) { $0 + sim.payloadLog.records(address: $1).count } }
    let before = total()
    let sent = await eventually(timeout: 120) { total() >= before + count }
    #expect(sent, "\(count) more notifications from \(addresses.count) straps")
}

/// Runs `body` with the simulator on a private bus (the shared harness).
func withSimulator(_ configure: (inout SimulatorConfiguration) -> Void,
                   _ body: (PrivateBus, SimulatedBlueZ) async throws -> Void) async throws {
    try await withSimulatorOnPrivateBus(configure, body)
}

/// Resident memory of a process, MiB (0 when it is gone).
func residentMiB(_ pid: Int32) -> Int {
    guard let status = readFile("/proc/\(pid)/status") else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) / 1024
    }
    return 0
}

/// Asks the status socket every 250 ms on a thread of its own (the ask blocks), timing
/// each answer and keeping the device count hci0 reports.
final class StatusPoller: @unchecked Sendable {
    struct Answer { var seconds: Double }

    let socket: String
    let pid: Int32
    private let lock = NSLock()
    private var running = true
    private var _answers: [Answer] = []
    private var _failures: [String] = []
    private var _lastDevices: Int?
    private var _peakRSS = 0
    private var thread: Thread?

    init(socket: String, pid: Int32) {
        self.socket = socket
        self.pid = pid
    }

    var peakRSS: Int { lock.withLock { _peakRSS } }

    var answers: [Answer] { lock.withLock { _answers } }
    var failures: [String] { lock.withLock { _failures } }
    var lastDevices: Int? { lock.withLock { _lastDevices } }

    func start() {
        let t = Thread { [self] in
            while lock.withLock({ running }) {
                let start = ContinuousClock.now
                do {
                    let line = try StatusClient.ask(socket, .status, timeout: .seconds(10))
                    let seconds = (ContinuousClock.now - start) / .seconds(1)
                    let report = try StatusReport(json: line)
                    let rss = residentMiB(pid)
                    lock.withLock {
                        _answers.append(Answer(seconds: seconds))
                        _lastDevices = report.adapters?.first?.devices
                        _peakRSS = max(_peakRSS, rss)
                    }
                } catch {
                    lock.withLock { _failures.append("\(error)") }
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
        thread = t
        t.start()
    }

    func stop() {
        lock.withLock { running = false }
        while thread?.isFinished == false { Thread.sleep(forTimeInterval: 0.05) }
    }
}
