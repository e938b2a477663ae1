// SPDX-License-Identifier: MIT
import AsyncHTTPClient
import BlegateTestSupport
@testable import BlegateRun
import Foundation
import Testing
import TestBackend
#if canImport(Glibc)
import Glibc
#endif

/// `/metrics` of `blegate run`: the figures `blegate status` shows, in Prometheus's
/// text format, on a port of its own.
@Suite("blegate run: Prometheus metrics")
struct GatewayMetricsTests {
    static func report(_ json: String) throws -> StatusReport { try StatusReport(json: json) }

    /// Two straps on hci0 (one streaming, one waiting for a link), one on hci1 advertised.
    static let first = """
        {"source":"service","gateway_id":"g","generated_at":"2026-11-28T10:00:00.000Z","cache_file":"/x",
         "devices":[
          {"address":"A0:00:00:00:00:01","adapter":"hci0","state":"streaming","connected":true,"battery":85,"paired":false,
           "last_seen":"2026-11-28T09:59:58.000Z"},
          {"address":"A0:00:00:00:00:02","adapter":"hci0","state":"waiting-for-link","connected":false,"paired":false},
          {"address":"A0:00:00:00:00:03","adapter":"hci1","state":"advertised","connected":false,"battery":12,"paired":false}],
         "adapters":[{"adapter":"hci0","links":1,"connecting":0,"limit":1,"learned_limit":1,"max_links":7,"probing":false},
                     {"adapter":"hci1","links":0,"connecting":0,"limit":7,"max_links":7,"probing":false}],
         "adapter_recoveries":{"hci0":2},
         "outbox":{"pending":120,"unpaired_pending":0,"unpaired_policy":"send","delivered":900,"quarantined":3,"total":1023,
                   "oldest_pending_age_seconds":42.5,"buffered":0,"file_bytes":204800,"pending_workouts":1,
                   "pending_profile_metrics":0,"filesystem_free_bytes":1000,"filesystem_size_bytes":8000},
         "sync":{"state":"idle","endpoint":"http://b/","consecutive_failures":0,"delivered_since_start":900,
                 "quarantined_since_start":3,"requests":{"ok":18,"http_error":2,"unreachable":1,"unauthorized":0},
                 "last_success_at":"2026-11-28T09:59:55.000Z"},
         "errors":[],
         "current_class":{"name":"Spin","type":"cycle","origin":"manual","start_time":"2026-11-28T09:30:00.000Z"},
         "totals":{"heart_rate_notifications":1000,"battery_notifications":4,"advertisements":30,"undecodable":5,
                   "oversized":1,"too_fast":7,"reconnects":2,"records_committed":{"heart_rate":1020,"device":3}}}
        """

    @Test("every figure of a status report, by the names docs/metrics.md lists")
    func mapsReport() throws {
        let metrics = GatewayMetrics(version: "1.2.3", startedAt: .init(millisecondsSince1970: 1_795_000_000_000))
        metrics.update(from: try Self.report(Self.first))
        let m = MetricsText(metrics.registry.emitToString())
        #expect(m.value("blegate_build_info", ["version": "1.2.3"]) == 1)
        #expect(m.value("blegate_build_version_number") == 10203)
        #expect(m.value("blegate_start_time_seconds") == 1_795_000_000)
        #expect(m.value("blegate_notifications_received_total", ["kind": "heart_rate"]) == 1000)
        #expect(m.value("blegate_notifications_received_total", ["kind": "battery"]) == 4)
        #expect(m.value("blegate_notifications_received_total", ["kind": "advertisement"]) == 30)
        #expect(m.value("blegate_malformed_payloads_total", ["reason": "undecodable"]) == 5)
        #expect(m.value("blegate_malformed_payloads_total", ["reason": "oversized"]) == 1)
        #expect(m.value("blegate_notifications_dropped_total", ["reason": "too_fast"]) == 7)
        #expect(m.value("blegate_reconnects_total") == 2)
        #expect(m.value("blegate_records_committed_total", ["kind": "heart_rate"]) == 1020)
        #expect(m.value("blegate_records_committed_total", ["kind": "hrv"]) == 0)
        #expect(m.value("blegate_straps", ["state": "streaming", "adapter": "hci0"]) == 1)
        #expect(m.value("blegate_straps", ["state": "waiting-for-link", "adapter": "hci0"]) == 1)
        #expect(m.value("blegate_straps", ["state": "advertised", "adapter": "hci1"]) == 1)
        #expect(m.value("blegate_straps", ["state": "streaming", "adapter": "hci1"]) == 0)
        #expect(m.sum("blegate_straps") == 3)
        #expect(m.value("blegate_strap_battery_ratio", ["address": "A0:00:00:00:00:01"]) == 0.85)
        #expect(m.value("blegate_strap_battery_ratio", ["address": "A0:00:00:00:00:03"]) == 0.12)
        #expect(m.value("blegate_strap_battery_ratio", ["address": "A0:00:00:00:00:02"]) == nil)
        #expect(m.value("blegate_strap_last_seen_timestamp_seconds", ["address": "A0:00:00:00:00:01"]) == 1_795_859_998)
        #expect(m.value("blegate_adapter_links", ["adapter": "hci0"]) == 1)
        #expect(m.value("blegate_adapter_link_limit", ["adapter": "hci1"]) == 7)
        #expect(m.value("blegate_adapter_learned_link_limit", ["adapter": "hci0"]) == 1)
        #expect(m.value("blegate_adapter_learned_link_limit", ["adapter": "hci1"]) == nil)
        #expect(m.value("blegate_adapter_resets_total", ["adapter": "hci0"]) == 2)
        #expect(m.value("blegate_cache_size_bytes") == 204_800)
        #expect(m.value("blegate_cache_filesystem_free_bytes") == 1000)
        #expect(m.value("blegate_cache_filesystem_size_bytes") == 8000)
        #expect(m.value("blegate_outbox_pending_records") == 120)
        #expect(m.value("blegate_outbox_oldest_pending_age_seconds") == 42.5)
        #expect(m.value("blegate_outbox_pending_documents", ["kind": "workout"]) == 1)
        #expect(m.value("blegate_sync_requests_total", ["result": "ok"]) == 18)
        #expect(m.value("blegate_sync_requests_total", ["result": "http_error"]) == 2)
        #expect(m.value("blegate_sync_requests_total", ["result": "unreachable"]) == 1)
        #expect(m.value("blegate_sync_records_total", ["outcome": "delivered"]) == 900)
        #expect(m.value("blegate_sync_last_success_timestamp_seconds") == 1_795_859_995)
        #expect(m.value("blegate_class_running") == 1)
        #expect(m.types["blegate_notifications_received_total"] == "counter")
        #expect(m.types["blegate_straps"] == "gauge")
    }

    @Test("a later report: counters advance by what changed, series of straps and limits gone are removed")
    func laterReport() throws {
        let metrics = GatewayMetrics(version: "1.0.0", startedAt: .now)
        metrics.update(from: try Self.report(Self.first))
        var later = try Self.report(Self.first)
        later.devices.removeLast()
        later.adapters?[0].learnedLimit = nil
        later.totals?.heartRateNotifications = 1500
        later.currentClass = nil
        later.sync = nil
        metrics.update(from: later)
        metrics.update(from: later)
        let m = MetricsText(metrics.registry.emitToString())
        #expect(m.value("blegate_notifications_received_total", ["kind": "heart_rate"]) == 1500)
        #expect(m.value("blegate_strap_battery_ratio", ["address": "A0:00:00:00:00:03"]) == nil)
        #expect(m.value("blegate_straps", ["state": "advertised", "adapter": "hci1"]) == 0)
        #expect(m.value("blegate_adapter_learned_link_limit", ["adapter": "hci0"]) == nil)
        #expect(m.value("blegate_class_running") == 0)
        #expect(GatewayMetrics.versionNumber("2.10.3") == 21003)
        #expect(GatewayMetrics.versionNumber("1.0.0-rc1") == 10000)
    }

    @Test("a running gateway: after the straps go quiet, /metrics and status --json show the same figures",
          .timeLimit(.minutes(4)))
    func agreesWithStatus() async throws {
        let backend = try TestBackend(.init(token: RunFixture.token))
        try await backend.start()
        defer { Task { await backend.stop() } }
        try await withSimulator({ c in
            c.straps = 4
            c.rate = 2
            c.advertising = 1
            c.advertisingOnly = 1
            c.malformedRate = 0.1
        }) { bus, sim in
            let f = try RunFixture()
            let port = try freeLoopbackPort()
            try f.writeConfig(backendURL: backend.baseURL, extra: "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n",
                              backendExtra: "interval = \"1s\"")
            let run = try await f.run(bus: bus.address)
            defer { run.signal(SIGKILL) }
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await backend.waitForRecords(60, timeout: .seconds(90)))
            // Every kind of count has something to agree on: advertised readings and
            // undecodable payloads too.
            #expect(await eventually(timeout: 90) {
                guard let t = (try? await f.status())?.totals else { return false }
                return t.advertisements > 0 && t.undecodable > 0
            }, "an advertised reading and an undecodable payload")
            let url = "http://127.0.0.1:\(port)/metrics"
            let live = try await Self.get(url)
            #expect(live.status == 200 && live.contentType.hasPrefix("text/plain; version=0.0.4"), "\(live)")

            try await f.quiet(sim)
            var report: StatusReport?
            let drained = await eventually(timeout: 60) {
                report = try? await f.status()
                return report?.outbox.pending == 0
            }
            #expect(drained, "the outbox drains: \(report?.json() ?? "")")
            // Straps still move between states as their links end after the quiet: status
            // and the scrape are taken again until no strap moved while the scrape was taken.
            func states(_ r: StatusReport) -> [String: Int] { Dictionary(r.devices.map { ($0.state, 1) }, uniquingKeysWith: +) }
            var s = try await f.status()
            var m = MetricsText(try await Self.get(url).body)
            #expect(await eventually(timeout: 60) {
                guard let before = try? await f.status(), let body = try? await Self.get(url).body,
                      let after = try? await f.status() else { return false }
                (s, m) = (after, MetricsText(body))
                return states(before) == states(after)
            }, "the straps' states hold still for a scrape")
            let t = try #require(s.totals)
            #expect(t.heartRateNotifications > 0 && t.advertisements > 0 && t.undecodable > 0, "\(t)")
            #expect(m.value("blegate_notifications_received_total", ["kind": "heart_rate"]) == Double(t.heartRateNotifications))
            #expect(m.value("blegate_notifications_received_total", ["kind": "advertisement"]) == Double(t.advertisements))
            #expect(m.value("blegate_notifications_received_total", ["kind": "battery"]) == Double(t.batteryNotifications))
            #expect(m.value("blegate_malformed_payloads_total", ["reason": "undecodable"]) == Double(t.undecodable))
            #expect(m.value("blegate_records_committed_total", ["kind": "heart_rate"]) == Double(t.recordsCommitted["heart_rate"] ?? -1))
            #expect(m.value("blegate_reconnects_total") == Double(t.reconnects))
            let sync = try #require(s.sync)
            #expect(m.value("blegate_sync_records_total", ["outcome": "delivered"]) == Double(sync.deliveredSinceStart))
            #expect(m.value("blegate_sync_requests_total", ["result": "ok"]) == Double(sync.requests?.ok ?? -1))
            #expect(m.value("blegate_outbox_pending_records") == 0)
            #expect(m.value("blegate_cache_size_bytes") == Double(s.outbox.fileBytes))
            for state in Set(s.devices.map(\.state)) {
                #expect(m.sum("blegate_straps", ["state": state]) == Double(s.devices.filter { $0.state == state }.count), "\(state)")
            }
            for a in s.adapters ?? [] {
                #expect(m.value("blegate_adapter_links", ["adapter": a.adapter]) == Double(a.links))
            }
            // The backend holds every record the gateway counts as delivered.
            #expect(backend.store.records.count == sync.deliveredSinceStart)
            // The commit latency histogram counted every committed record.
            let committed = t.recordsCommitted.values.reduce(0, +)
            #expect(m.value("blegate_commit_latency_seconds_count") == Double(committed))
        }
    }

    @Test("a metrics port another process holds: the gateway runs, says so, and listens once the port is free",
          .timeLimit(.minutes(3)))
    func busyPort() async throws {
        try await withSimulator({ c in c.straps = 1 }) { bus, _ in
            let (fd, port) = try boundLoopbackSocket()
            Glibc.listen(fd, 1)
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil, extra: "[metrics]\nlisten = \"127.0.0.1:\(port)\"\n")
            let run = try await f.run(bus: bus.address)
            defer { run.signal(SIGKILL) }
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            var errors: [String] = []
            let told = await eventually(timeout: 30) {
                errors = ((try? await f.status())?.errors ?? []).map(\.message)
                return errors.contains { $0.contains("metrics cannot listen on 127.0.0.1:\(port)") }
            }
            #expect(told, "\(errors)")
            close(fd)
            let answered = await eventually(timeout: 30) { (try? await Self.get("http://127.0.0.1:\(port)/metrics"))?.status == 200 }
            #expect(answered)
        }
    }

    static func get(_ url: String) async throws -> (status: Int, contentType: String, body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "Content-Type") ?? "", String(buffer: body))
    }
}
