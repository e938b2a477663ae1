// SPDX-License-Identifier: MIT
import ArgumentParser
import Cache
import Config
import StrapLinks
import BlegateRun
import ScanStreamCommands

/// `blegate status`: live from the running gateway over its socket, or from the cache
/// database when it is not running.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show devices, outbox, last sync and recent errors of the gateway.",
        discussion: """
            Asks the running gateway on status.socket; when nothing answers there, reads \
            the cache database instead (devices from the registry, the outbox as it is, the \
            last sync and errors as the gateway saved them). Exit status: 0 shown, 1 \
            neither the gateway nor the cache could be read, 78 configuration error.
            """)

    @OptionGroup var gateway: GatewayOptions

    @Flag(help: "Print the report as one JSON object (docs/status.md).")
    var json = false

    @Option(help: "Status socket (default: status.socket from the configuration).")
    var socket: String?

    func run() async throws {
        let config = try gateway.load()
        let path = socket ?? config.status.socket
        var report: StatusReport?
        do {
            let answer = try StatusClient.ask(path, .status)
            do {
                report = try StatusReport(json: answer)
            } catch {
                printError("blegate status: the gateway answered on \(path) with something else than a report: \(answer)")
                throw ExitCode(1)
            }
        } catch let error as StatusSocketError {
            if !error.nobodyListening {
                printError("blegate status: cannot ask the running gateway (\(error)); reading the cache instead")
            }
        }
        if report == nil {
            let cache = try gateway.openCache(config)
            do {
                report = try await StatusReport.fromDatabase(cache: cache, gatewayID: config.gateway.id)
            } catch {
                printError("blegate status: cannot read the cache: \(error)")
                throw ExitCode(1)
            }
        }
        guard let report else { return }
        print(json ? report.json() : StatusText.render(report), terminator: json ? "\n" : "")
    }
}

/// The status report for people.
enum StatusText {
    static func render(_ r: StatusReport) -> String {
        var out = ""
        if r.source == "service" {
            out += "blegate \(r.gatewayID): running since \(r.startedAt.map(LocalTime.text(iso:)) ?? "?") (live)\n"
        } else {
            out += "blegate \(r.gatewayID): not running (from the cache database"
            out += r.savedAt.map { "; state saved \(LocalTime.text(iso: $0)) by the run started \(r.startedAt.map(LocalTime.text(iso:)) ?? "?"))\n" } ?? "; it never ran)\n"
        }
        out += "cache: \(r.cacheFile)\n"
        if let c = r.currentClass {
            out += "class: \"\(c.name ?? "unnamed")\" (\(c.type)) since \(LocalTime.text(iso: c.startTime))"
                + (c.plannedEndTime.map { ", ends at \(LocalTime.text(iso: $0))" } ?? "") + "\n"
        }
        out += "\n"

        out += "DEVICES\n"
        if r.devices.isEmpty {
            out += "  none\n"
        } else {
            out += "  " + pad("ADDRESS", 19) + pad("NAME", 20) + pad("STATE", 17) + pad("HR", 5, right: true) + pad("BATT", 6, right: true)
                + pad("RSSI", 6, right: true) + pad("RECONN", 8, right: true) + "  " + pad("PAIRED", 7) + "LAST SEEN\n"
            for d in r.devices {
                let lastSeen: String = d.lastSeen.map { LocalTime.text(iso: $0) } ?? "-"
                out += "  " + pad(d.address, 19) + pad(clip(d.name ?? "-", 19), 20) + pad(d.state, 17)
                    + pad(d.lastHeartRate.map(String.init) ?? "-", 5, right: true)
                    + pad(d.battery.map { "\($0)%" } ?? "-", 6, right: true)
                    + pad(d.rssi.map(String.init) ?? "-", 6, right: true)
                    + pad(d.reconnects.map(String.init) ?? "-", 8, right: true) + "  "
                    + pad(d.paired ? "yes" : "no", 7) + lastSeen + "\n"
                if let reason = d.reason, d.state != "streaming" { out += "      " + reason + "\n" }
                if let flag = d.flag {
                    out += "      \(flag): \(d.tooFast ?? 0) too fast and \(d.oversized ?? 0) oversized notifications dropped\n"
                }
            }
        }
        if let adapters = r.adapters, !adapters.isEmpty {
            out += "  links: " + adapters.map { a in
                "\(a.adapter) \(a.links)/\(a.limit)" + (a.connecting > 0 ? " (+\(a.connecting) connecting)" : "")
                    + (a.learnedLimit != nil ? " learned" : " (limit not known yet, at most \(a.maxLinks))")
                    + (a.probing ? ", trying one more" : "")
                    + (a.devices.map { ", \($0) device(s) on the bus" } ?? "")
            }.joined(separator: "; ") + "\n"
        }
        if let window = r.notifyWindowMilliseconds {
            out += "  notifications gather up to \(window) ms" + (Int64(window) <= LinkConfiguration.watchedNotifyGather.milliseconds ? " (a wall screen watches)" : " (no wall screen watches)") + "\n"
        }
        if let rec = r.adapterRecoveries, !rec.isEmpty {
            out += "  adapter recoveries: " + rec.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + "\n"
        }
        if let t = r.totals {
            out += "  since start: \(t.heartRateNotifications) heart-rate and \(t.batteryNotifications) battery notifications, "
                + "\(t.advertisements) advertised readings, \(t.undecodable) undecodable, \(t.oversized) oversized, "
                + "\(t.tooFast) too fast, \(t.reconnects) reconnects; records committed: "
                + t.recordsCommitted.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + "\n"
        }

        let o = r.outbox
        out += "\nOUTBOX\n"
        out += "  pending \(o.pending) (unpaired \(o.unpairedPending), unpaired = \(o.unpairedPolicy))"
        out += o.oldestPendingAgeSeconds.map { ", oldest stored \(formatAge($0)) ago" } ?? ""
        out += "; delivered \(o.delivered), quarantined \(o.quarantined), buffered \(o.buffered), file \(o.fileBytes / 1024) KiB\n"
        if let w = o.pendingWorkouts, let p = o.pendingProfileMetrics {
            out += "  workouts pending \(w), profile metrics pending \(p), documents quarantined \(o.quarantinedDocuments ?? 0)\n"
        }
        if let problem = o.writeProblem { out += "  cache: \(problem)\n" }
        if let free = o.filesystemFreeBytes, let size = o.filesystemSizeBytes, size > 0 {
            out += "  disk: \(free >> 20) MiB free of \(size >> 20) MiB\n"
        }

        out += "\nSYNC\n"
        if let s = r.sync {
            out += "  \(s.state)" + (s.reason.map { " (\($0))" } ?? "") + " → \(s.endpoint)"
            out += "; since start: \(s.deliveredSinceStart) delivered, \(s.quarantinedSinceStart) quarantined, \(s.consecutiveFailures) failure(s) in a row\n"
            if let q = s.requests {
                out += "  requests since start: \(q.ok) ok, \(q.httpError) HTTP errors, \(q.unreachable) unanswered, \(q.unauthorized) unauthorized"
                out += (s.lastSuccessAt.map { "; last taken \(LocalTime.text(iso: $0))" } ?? "") + "\n"
            }
            if let l = s.lastSync {
                out += "  last: \(LocalTime.text(iso: l.at)) \(l.endpoint) HTTP \(l.httpStatus.map(String.init) ?? "none"), \(l.records) records"
                out += " (inserted \(l.inserted), duplicates \(l.duplicates), rejected \(l.rejected)) in \(l.durationMilliseconds) ms"
                out += (l.error.map { "; error: \($0)" } ?? "") + "\n"
            } else {
                out += "  no sync yet\n"
            }
        } else {
            out += "  no backend (backend.url not set): records stay in the cache\n"
        }

        out += "\nERRORS (last \(r.errors.count))\n"
        if r.errors.isEmpty { out += "  none\n" }
        for e in r.errors {
            out += "  \(LocalTime.text(iso: e.at)) \(pad(e.category, 9))\(e.message)" + (e.detail.map { " [\($0)]" } ?? "") + "\n"
        }
        return out
    }

}
