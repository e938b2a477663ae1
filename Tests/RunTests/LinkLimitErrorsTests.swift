// SPDX-License-Identifier: MIT
import BlegateTestSupport
import BlegateRun
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A class bigger than its links: adapters refusing links at their limits, and the
/// limits being learned, are routine. `blegate status` shows them as learned limits and
/// straps waiting for a link, never as errors.
@Suite("link limits are not errors", .serialized)
struct LinkLimitErrorsTests {
    @Test("10 straps on adapters holding 2 and 3 links: limits learned, the errors list holds none of it",
          .timeLimit(.minutes(5)))
    func refusalsAtTheLimitAreNotErrors() async throws {
        try await withSimulator({ c in
            c.adapters = 2
            c.straps = 10
            c.linkLimits = [2, 3]
            c.seed = 31
        }) { bus, _ in
            let f = try RunFixture()
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")

            func learned(_ r: StatusReport, _ adapter: String, _ n: Int) -> Bool {
                r.adapters?.first { $0.adapter == adapter }.map { $0.learnedLimit == n && $0.links == n } ?? false
            }
            var report: StatusReport?
            let settled = await eventually(timeout: 120) {
                guard let r = try? await f.status() else { return false }
                report = r
                return learned(r, "hci0", 2) && learned(r, "hci1", 3)
                    && r.devices.filter { $0.state == "streaming" }.count == 5
            }
            #expect(settled, "\(report?.json() ?? "no status")")
            // Refusals go on while the straps without a link keep asking: let a few more come.
            // A strap can lose its link meanwhile (the simulated radio): its slot is taken
            // again within the limit, never above it.
            try await Task.sleep(for: .seconds(3))
            var r = try await f.status()
            let held = await eventually(timeout: 60) {
                guard let now = try? await f.status() else { return false }
                r = now
                return learned(now, "hci0", 2) && learned(now, "hci1", 3)
            }
            #expect(held, "\(r.json())")
            let limitEntries = r.errors.filter { e in
                let text = (e.message + " " + (e.detail ?? "")).lowercased()
                return text.contains("refuse") || text.contains("limit") || text.contains("full")
            }
            #expect(limitEntries.isEmpty, "link-limit entries in errors: \(limitEntries)")
            // The straps without a link say why, and are not backing off as after a failure.
            for d in r.devices where d.state != "streaming" {
                #expect(["waiting-for-link", "advertised", "connecting", "resolving"].contains(d.state),
                        "\(d.address) \(d.state): \(d.reason ?? "")")
            }
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout)")
        }
    }
}
