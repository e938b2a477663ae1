import GATT
import StrapLinks
import LinkPolicy
import Synchronization
import WearMetrics
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// `blegate simulate --live`: the gateway's own connection manager, on a second
/// connection, following every simulated strap, with a table for people instead of
/// records: the whole path (D-Bus, the simulator, the manager, the decoder) on any machine.
final class LiveView: RecordSink {
    struct Row: Sendable {
        var heartRate: Double?
        var rr: [Double] = []
        var contact = ""
        var battery: String?
    }

    let connection: DBusConnection
    private let rows = Mutex<[String: Row]>([:])

    init(connection: DBusConnection) { self.connection = connection }

    func receive(_ record: WearMetrics, kind: RecordKind) {
        rows.withLock { rows in
            var row = rows[record.deviceID] ?? Row()
            switch kind {
            case .heartRate:
                row.heartRate = record[metric: "hr"]
                row.rr = record.rrIntervals ?? []
                row.contact = record.meta["sensor_contact"] ?? ""
            case .device:
                if let b = record.meta["battery"], let f = Double(b) { row.battery = "\(Int((f * 100).rounded()))%" }
            case .hrv, .measurement:
                break
            }
            rows[record.deviceID] = row
        }
    }

    /// Runs until cancelled.
    func run() async throws {
        var config = LinkConfiguration()
        config.selection = DeviceSelection(mode: .auto)
        let manager = try StrapManager(connection: connection, configuration: config, sink: self)
        let runner = Task { try await manager.run() }
        let tty = isatty(1) != 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(tty ? 1 : 5))
            print(table(manager.links, clear: tty), terminator: "")
            fflush(nil)
        }
        runner.cancel()
        _ = await runner.result
    }

    private func table(_ links: [LinkStatus], clear: Bool) -> String {
        let current = rows.withLock { $0 }
        var out = clear ? "\u{1B}[2J\u{1B}[H" : ""
        out += pad("strap", 22) + pad("address", 19) + pad("state", 12) + pad("HR", 5) + pad("RR ms", 18) + pad("contact", 14)
            + pad("batt", 6) + "notif/bad/reconn\n"
        for link in links.sorted(by: { ($0.name ?? "") < ($1.name ?? "") }) {
            let r = current[link.address] ?? Row()
            let rr = r.rr.map { String(Int($0.rounded())) }.joined(separator: ",")
            out += pad(link.name ?? "?", 22) + pad(link.address, 19) + pad(link.state.rawValue, 12)
                + pad(r.heartRate.map { String(Int($0)) } ?? "-", 5) + pad(rr.isEmpty ? "-" : rr, 18) + pad(r.contact.isEmpty ? "-" : r.contact, 14)
                + pad(r.battery ?? "-", 6) + "\(link.counters.heartRate)/\(link.counters.malformed)/\(link.reconnects)\n"
        }
        return out
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? String(s.prefix(width - 1)) + " " : s + String(repeating: " ", count: width - s.count)
    }
}
