// SPDX-License-Identifier: MIT
import BackendContract
import BlegateServer
import BlegateTestSupport
import Foundation
import PostgresNIO
import Testing

/// Input PostgreSQL cannot store (a NUL in any string, a time offset past its ±15:59, a heart
/// rate past its column) is a 400 or a rejected item with its reason, never a 503 "retry
/// later" that a sender would retry for ever; and /healthz answers a load balancer in time.
@Suite("blegate-server: no input wedges a sender")
struct PoisonInputTests {
    static let gateway = "gym-poison"

    static func record(_ id: String, time: String = "2026-11-28T10:00:00.000Z", hr: String = "120", device: String = "A0:9E:1A:00:00:01",
                       meta: String = "\"battery\":\"0.9\"") -> String {
        """
        {"id":"\(id)","client_id":"c-1","timestamp":"\(time)","device_id":"\(device)","source":"ble_hrm","metrics":{"hr":\(hr)},"meta":{\(meta)}}
        """
    }

    @Test("records: each poison is a rejected item with its reason, the good record beside it is stored")
    func records() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway(Self.gateway)
        let poisons: [(String, String)] = [
            ("NUL in meta", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000001", meta: "\"x\":\"a\\u0000b\"")),
            ("NUL in a meta key", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000002", meta: "\"x\\u0000\":\"a\"")),
            ("NUL in device_id", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000003", device: "A0\\u0000")),
            ("offset +23:30", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000004", time: "2026-11-28T10:00:01+23:30")),
            ("offset +16:00", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000005", time: "2026-11-28T10:00:01+16:00")),
            ("hr 1e40", Self.record("0b6e8a3c-0000-4c2b-9a55-000000000006", hr: "1e40")),
        ]
        let good = Self.record("0b6e8a3c-0000-4c2b-9a55-0000000000ff", time: "2026-11-28T10:00:02.000+15:59")
        // Storable: float4 takes it as 0 (PostgreSQL would refuse the float8 as too small).
        let tiny = Self.record("0b6e8a3c-0000-4c2b-9a55-0000000000fe", time: "2026-11-28T10:00:03.000Z", hr: "1e-50")
        let answer = try await h.send("/api/v1/metrics", Make.metrics(gateway: Self.gateway, poisons.map(\.1) + [good, tiny]), token: token)
        #expect(answer.status == 200, "\(answer.body)")
        let rejected = answer.json?["rejected"]?.array ?? []
        #expect(answer.json?["inserted"]?.number == 2, "\(answer.body)")
        #expect(rejected.count == poisons.count, "\(answer.body)")
        let reasons = rejected.compactMap { $0["reason"]?.string }
        #expect(reasons.filter { $0.contains("NUL") }.count == 3, "\(reasons)")
        #expect(reasons.filter { $0.hasPrefix("timestamp:") }.count == 2, "\(reasons)")
        #expect(reasons.contains("metrics.hr: must be from 0 to 65535"), "\(reasons)")
    }

    @Test("workouts, profile metrics, samples and pairing: 400 or rejected, never 5xx")
    func otherEndpoints() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        let token = try await h.store.addGateway(Self.gateway)
        let workout = Make.workout(gateway: Self.gateway, className: "Spin\\u0000", start: "2026-11-28T10:00:00.000Z",
                                   end: "2026-11-28T10:45:00.000Z", duration: 2700)
        let late = Make.workout(gateway: Self.gateway, start: "2026-11-28T10:00:00.000+20:00", end: "2026-11-28T10:45:00.000+20:00",
                                duration: 2700)
        let w = try await h.send("/api/v1/workouts", Make.workouts(gateway: Self.gateway, [workout, late]), token: token)
        #expect(w.status == 200 && w.json?["rejected"]?.array?.count == 2, "\(w.body)")
        let m = try await h.send("/api/v1/profile-metrics", "{\"gateway_id\":\"\(Self.gateway)\",\"metrics\":[\(Make.profileMetric().replacingOccurrences(of: "scale-1", with: "scale\\u0000"))]}",
                                 token: token)
        #expect(m.status == 200 && m.json?["rejected"]?.array?.count == 1, "\(m.body)")
        let s = try await h.send("/api/v1/samples", "{\"samples\":[\(Make.sample().replacingOccurrences(of: "Polar H10", with: "Polar\\u0000"))]}",
                                 token: token)
        #expect(s.status == 400 && s.body.contains("NUL"), "\(s.status) \(s.body)")
        for body in ["{\"code\":\"AB\\u0000C\",\"device\":{\"address\":\"A0:9E:1A:00:00:01\"}}",
                     "{\"code\":\"ABC\",\"device\":{\"address\":\"A0:9E:1A:00:00:01\",\"name\":\"x\\u0000\"}}",
                     "{\"code\":\"ABC\",\"device\":{\"address\":\"\"}}"] {
            let p = try await h.send("/api/v1/pair", body, token: token)
            #expect(p.status == 400, "\(body): \(p.status) \(p.body)")
        }
    }

    @Test("/healthz: 200 while the database answers; 503 at its 2 s deadline while every connection is held up")
    func healthWithinTwoSeconds() async throws {
        let h = try await ServerHarness.start()
        defer { Task { await h.stop() } }
        #expect(try await h.get("/healthz").status == 200)
        // Every connection of the pool (16) busy for 8 s: a check waits for one.
        let held = Task {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask { _ = try? await h.server.client.query("SELECT pg_sleep(8)") }
                }
            }
        }
        defer { held.cancel() }
        try await Task.sleep(for: .milliseconds(500))
        // Answered by the 2 s deadline, not by a connection freed after 8 s.
        let answer = try await h.get("/healthz")
        #expect(answer.status == 503 && answer.body.contains("within 2 s"), "\(answer.status) \(answer.body)")
        await held.value
        #expect(await eventually(timeout: 30) { (try? await h.get("/healthz"))?.status == 200 })
    }
}
