// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import Testing

/// Debian's Prometheus scraping a `blegate run` on the simulator and the blegate-server it
/// sends to, with the shipped alert rules loaded: both targets up, and once the straps go
/// quiet and the outbox drains, what Prometheus holds equals `blegate status` and the
/// server's database.
@Suite("Prometheus scrapes a gateway and blegate-server", .serialized)
struct PrometheusScrapeTests {
    static let gateway = "gym-prometheus"

    @Test("up is 1 for both jobs; the gateway's figures equal status, the server's equal its database; no alert fires",
          .timeLimit(.minutes(6)))
    func scrapes() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ServerProcess.binary), "no blegate-server beside \(BlegateBinary.path)")
        let database = try await PostgresFixture.database()
        let tokens = try await ServerProcess.prepare(database, gateways: [Self.gateway])
        let serverMetrics = try freeLoopbackPort()
        let (server, port) = try await ServerProcess.start(database, port: 0, metrics: "127.0.0.1:\(serverMetrics)")
        defer { server.signal(SIGKILL) }
        let gatewayMetrics = try freeLoopbackPort()
        let room = try GatewayRoom(id: Self.gateway, backend: "http://127.0.0.1:\(port)", token: tokens[0],
                                   metrics: "127.0.0.1:\(gatewayMetrics)")
        let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../scripts/prometheus/blegate.rules.yml")
            .standardizedFileURL.path
        let prometheus = try await PrometheusProcess.start(
            jobs: [("blegate", "127.0.0.1:\(gatewayMetrics)"), ("blegate-server", "127.0.0.1:\(serverMetrics)")], rules: [rules])
        defer { prometheus.stop() }

        try await withSimulatorOnPrivateBus({ c in
            c.straps = 4
            c.seed = 23
            c.rate = 2
            c.advertising = 1
            c.advertisingOnly = 1
        }) { bus, sim in
            let run = try await room.run(bus: bus.address)
            defer { run.signal(SIGKILL) }
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")

            // Both targets scraped at least twice, and up.
            for job in ["blegate", "blegate-server"] {
                let scraped = await eventually(timeout: 60) {
                    (try? await prometheus.value("count_over_time(up{job=\"\(job)\"}[5m])")) ?? 0 >= 2
                }
                #expect(scraped, "two scrapes of \(job)")
                #expect(try await prometheus.value("up{job=\"\(job)\"}") == 1, "up{job=\"\(job)\"}")
            }
            #expect(try await eventually(timeout: 90) { try await ServerProcess.records(database, gateway: Self.gateway) >= 40 },
                    "records reach the server: \(run.stderr.suffix(800))")

            // The straps go quiet; the outbox drains; then one more scrape of each job.
            _ = await sim.stopAdvertising("*")
            _ = await sim.linkLoss("*")
            var settled: ContractValue?
            #expect(await eventually(timeout: 90) {
                settled = await room.status()
                guard let s = settled, let devices = s["devices"]?.array else { return false }
                return devices.allSatisfy { $0["connected"]?.bool == false } && s["outbox"]?["pending"]?.number == 0
                    && s["outbox"]?["buffered"]?.number == 0
            }, "the straps disconnect and the outbox drains: \(settled.map { "\($0)" } ?? "no status")")
            let status = try #require(await room.status())
            let after = Date().timeIntervalSince1970
            for job in ["blegate", "blegate-server"] {
                #expect(await eventually(timeout: 30) {
                    ((try? await prometheus.value("timestamp(up{job=\"\(job)\"})")) ?? 0) > after + 0.5
                }, "a scrape of \(job) after the outbox drained")
            }

            // The gateway's figures, as Prometheus holds them, are status's.
            func number(_ v: ContractValue?) -> Double? { v?.number }
            let totals = try #require(status["totals"])
            let sync = try #require(status["sync"])
            let delivered = try #require(number(sync["delivered_since_start"]))
            let expectations: [(String, Double?)] = [
                ("blegate_notifications_received_total{kind=\"heart_rate\"}", number(totals["heart_rate_notifications"])),
                ("blegate_notifications_received_total{kind=\"advertisement\"}", number(totals["advertisements"])),
                ("blegate_records_committed_total{kind=\"heart_rate\"}", number(totals["records_committed"]?["heart_rate"])),
                ("blegate_sync_records_total{outcome=\"delivered\"}", delivered),
                ("blegate_sync_requests_total{result=\"ok\"}", number(sync["requests"]?["ok"])),
                ("blegate_outbox_pending_records", 0),
                ("sum(blegate_straps)", Double(status["devices"]?.array?.count ?? -1)),
                ("blegate_build_info{version=\"1.0.0\"}", 1),
            ]
            for (expression, expected) in expectations {
                let held = try await prometheus.value(expression)
                #expect(held != nil && held == expected, "\(expression): Prometheus \(held.map { "\($0)" } ?? "none"), status \(expected.map { "\($0)" } ?? "none")")
            }
            #expect(number(totals["advertisements"]) ?? 0 > 0, "the advertising-only strap was recorded")

            // The server's: what it stored and answered as duplicates is what the gateway
            // delivered, and what its database holds.
            let stored = try await prometheus.value("blegate_server_records_total{outcome=\"stored\"}") ?? -1
            let duplicates = try await prometheus.value("blegate_server_records_total{outcome=\"duplicate\"}") ?? 0
            let inDatabase = try await ServerProcess.records(database, gateway: Self.gateway)
            #expect(stored == Double(inDatabase), "stored \(stored), database \(inDatabase)")
            #expect(stored + duplicates == delivered, "stored \(stored) + duplicates \(duplicates), gateway delivered \(delivered)")
            #expect(try await prometheus.value("blegate_server_database_up") == 1)
            let contact = try await prometheus.value("blegate_server_gateway_last_contact_timestamp_seconds{gateway=\"\(Self.gateway)\"}")
            #expect(contact.map { abs($0 - Date().timeIntervalSince1970) < 120 } == true, "last contact \(String(describing: contact))")
            #expect(try await prometheus.value("sum(blegate_server_http_requests_total{route=\"/api/v1/metrics\"})") ?? 0 > 0)

            // The rules loaded, and a healthy gym fires none.
            let groups = try await prometheus.get("/api/v1/rules")
            #expect(groups.status == 200 && groups.body.contains("\"type\":\"alerting\""), "\(groups.body.prefix(300))")
            let firing = try await prometheus.query("ALERTS{alertstate=\"firing\"}")
            #expect(firing.isEmpty, "\(firing.map(\.labels))")
        }
    }
}
