// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Foundation
import BlegateRun
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `blegate run` whose state directory fills up: a 32 MiB tmpfs (mounting needs root)
/// filled by a file beside the cache.
@Suite("blegate run on a full disk", .serialized)
struct DiskFullRunTests {
    static let canMount = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    /// Appends to `path` until the file system refuses (ENOSPC): whatever room the gateway
    /// frees (its reserve) is taken again on the next call.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        for size in [1 << 20, 1 << 12, 1] {
            let chunk = [UInt8](repeating: 0xA5, count: size)
            while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) == size {}
        }
    }

    @Test("the disk fills: status, the journal and the error list say so with what is held in memory; space comes back: writing resumes by itself",
          .enabled(if: canMount, "needs root to mount a tmpfs"), .timeLimit(.minutes(3)))
    func diskFull() async throws {
        try await withSimulator({ c in
            c.straps = 4
            c.seed = 21
            c.rate = 5
        }) { bus, _ in
            let f = try RunFixture()
            #expect(shellBlocking("mount -t tmpfs -o size=32m,mode=0700 blegate-run-full '\(f.dir)'").status == 0)
            defer { _ = shellBlocking("umount -l '\(f.dir)'") }
            try f.writeConfig(backendURL: nil)
            let run = try await f.run(bus: bus.address)
            #expect(await run.waitForStdout("ready:", timeout: 60), "\(run.stdout)\n\(run.stderr)")
            #expect(await run.waitForStdout("] connected ", count: 4, timeout: 90), "\(run.stdout)\n\(run.stderr)")
            #expect(await eventually(timeout: 60) { ((try? await f.status())?.outbox.total ?? 0) > 0 }, "records committed")

            // Fill the disk, and again whenever the gateway frees its reserve, until status
            // says the disk is full.
            let filler = f.dir + "/filler"
            var report: StatusReport?
            let began = ContinuousClock.now
            var marks: [String] = []
            func mark(_ what: String) { marks.append("\(what) \(String(format: "%.1f", (ContinuousClock.now - began) / .seconds(1))) s") }
            let full = await eventually(timeout: 90, every: .milliseconds(250)) {
                Self.fill(filler)
                report = try? await f.status()
                return report?.outbox.writeProblem != nil
            }
            #expect(full, "\(report?.json() ?? "no status")")
            mark("status says full")
            let problem = try #require(report?.outbox.writeProblem)
            #expect(problem.hasPrefix("disk full since ") && problem.contains(" UTC, ") && problem.contains(" records held in memory"), "\(problem)")
            // Still full: what is held grows, and the status keeps saying so.
            let held = await eventually(timeout: 60, every: .milliseconds(250)) {
                Self.fill(filler)
                report = try? await f.status()
                return (report?.outbox.buffered ?? 0) >= 20 && report?.outbox.writeProblem != nil
            }
            #expect(held, "\(report?.json() ?? "no status")")
            mark("20 held")
            // The gateway frees its reserve when the disk fills, and writes on until that
            // space is gone too: keep the disk full while the text report is asked for.
            var text: (out: String, status: Int32) = ("", 0)
            let said = await eventually(timeout: 30, every: .milliseconds(250)) {
                Self.fill(filler)
                text = await f.cli("status")
                return text.out.contains("  cache: disk full since ")
            }
            #expect(said, "\(text.out)")
            // The journal and the error list hear of it from the cache's health check (every 2 s).
            #expect(await eventually(timeout: 30) { (run.stdout + run.stderr).contains("cache: disk full since ") }, "the journal says it")
            let listed = await eventually(timeout: 30) {
                Self.fill(filler)
                report = try? await f.status()
                return report?.errors.contains { e in
                    e.category == "storage" && e.message == "cache: disk full" && e.detail?.hasPrefix("cache: disk full since ") == true
                        && e.detail?.contains("records held in memory") == true
                } == true
            }
            #expect(listed, "\(report?.errors ?? [])")
            mark("journal and error list")

            // Space comes back: everything held is written, without being asked.
            // (The gateway may have freed a page meanwhile and written once more: filled
            // again until status says full, so that what it holds is known at the release.)
            var last: StatusReport?
            let stillFull = await eventually(timeout: 60, every: .milliseconds(250)) {
                Self.fill(filler)
                last = try? await f.status()
                return last?.outbox.writeProblem != nil
            }
            let stuck = try #require(last)
            #expect(stillFull, "\(stuck.json())")
            unlink(filler)
            let recovered = await eventually(timeout: 60) {
                report = try? await f.status()
                guard let o = report?.outbox else { return false }
                return o.writeProblem == nil && o.total >= stuck.outbox.total + stuck.outbox.buffered
            }
            #expect(recovered, "\(report?.json() ?? "no status")")
            mark("recovered")
            #expect(report?.outbox.dropped == 0, "nothing dropped: the memory bound was never reached")
            #expect(await eventually(timeout: 30) { (run.stdout + run.stderr).contains("cache: writing again, nothing held in memory") },
                    "\(run.stdout.suffix(2000))")

            mark("journal says writing again")
            print("disk full through blegate run: " + marks.joined(separator: ", "))
            run.signal(SIGTERM)
            #expect(await run.wait(timeout: 60) == 0, "\(run.stdout.suffix(2000))\n\(run.stderr.suffix(2000))")
        }
    }
}
