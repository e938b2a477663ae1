// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import GatewayService
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Resident memory of a process, KiB.
private func residentKiB(_ pid: Int32) -> Int? {
    guard let status = readFile("/proc/\(pid)/status") else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    }
    return nil
}

@Suite("Devices that send too much", .serialized)
struct NotificationFloodTests {
    @Test("64 KiB values and notifications far faster than a heart are dropped, counted and flagged; RR per record is capped; memory stays flat")
    func flood() async throws {
        try await withSimulator({ c in
            c.straps = 5
            c.seed = 43
            c.rate = 1
        }) { bus, sim in
            let f = try RunFixture()
            // StartNotify: values of any length reach the gateway as D-Bus signals.
            try f.writeConfig(backendURL: nil, extra: "[bluetooth]\nnotify = \"start\"\n")
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("connected ", count: 5, timeout: 90), "\(run.stdout)\n\(run.stderr)")
            let streaming = try await eventually(timeout: 60) {
                try await f.status().devices.filter { $0.state == "streaming" && $0.lastHeartRate != nil }.count == 5
            }
            let first = try await f.status()
            #expect(streaming, "\(first.json())")

            // Memory before the flood, after the warm-up (HRV windows, page caches).
            var before: [Int] = []
            for _ in 0..<10 {
                before.append(residentKiB(run.pid) ?? 0)
                try await Task.sleep(for: .seconds(1))
            }
            let baseline = before.max() ?? 0

            let devices = sim.devices.map(\.address)
            let huge = Array(devices[0..<3]), fast = devices[3], calm = devices[4]
            for d in huge { #expect(await sim.setFlood(d, rate: 10, bytes: 65_536) == 1) }
            #expect(await sim.setFlood(fast, rate: 50, bytes: 512) == 1)
            let start = try await f.status()
            let started = ContinuousClock.now
            var peak = 0
            for _ in 0..<45 {
                peak = max(peak, residentKiB(run.pid) ?? 0)
                try await Task.sleep(for: .seconds(1))
            }
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            let end = try await f.status()
            print("flood: RSS \(baseline / 1024) MiB before, peak \(peak / 1024) MiB during \(Int(seconds)) s of 3 × 64 KiB at 10 Hz and 512 B at 50 Hz")
            #expect(peak - baseline < 16 * 1024, "RSS grew from \(baseline) KiB to \(peak) KiB")

            func device(_ r: StatusReport, _ a: String) -> StatusReport.DeviceStatus? { r.devices.first { $0.address == a } }
            for d in huge {
                let s = try #require(device(end, d))
                #expect((s.oversized ?? 0) > 0 && s.flag?.contains("longer than BLE allows") == true, "\(s)")
            }
            let f0 = try #require(device(start, fast)), f1 = try #require(device(end, fast))
            #expect((f1.tooFast ?? 0) > 0 && f1.flag?.contains("faster than a heart beats") == true, "\(f1)")
            #expect((f1.rrDropped ?? 0) > 0, "512-byte values carry 255 RR intervals; a record keeps 16: \(f1)")
            // Accepted: at most 5 a second plus the burst, of the 50 a second sent.
            let accepted = (f1.notifications ?? 0) - (f0.notifications ?? 0)
            #expect(accepted <= Int(5 * seconds) + 10 + 5, "accepted \(accepted) in \(seconds) s")
            #expect(accepted >= Int(4 * seconds), "a fast device still gives its records: \(accepted) in \(seconds) s")
            let quiet = try #require(device(end, calm))
            #expect(quiet.flag == nil && quiet.tooFast == 0 && quiet.oversized == 0 && quiet.state == "streaming", "\(quiet)")
            #expect(run.stdout.contains("notifications dropped"), "the journal says it")
            #expect(end.errors.contains { $0.message.contains(fast) }, "\(end.errors)")

            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout)\n\(run.stderr)")
        }
    }
}
