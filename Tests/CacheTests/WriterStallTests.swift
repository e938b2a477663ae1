// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Dispatch
import Testing

/// The watchdog's probe of the cache's writer thread on a real cache: the thread stamps
/// what it does as it goes, and the probe reads the stamps without waking it.
@Suite("The cache writer's liveness, as the watchdog sees it")
struct WriterStallTests {
    @Test("a writer stuck in its own work is reported once the busy timeout and the slack have passed, and not once it goes on")
    func stuckWriter() async throws {
        let dir = TempDir()
        let cache = try RecordCache(path: dir.database,
                                    options: CacheOptions(groupCommitInterval: .milliseconds(20), busyTimeout: .milliseconds(200)))
        let within = Duration.milliseconds(100)
        #expect(cache.writerStall(within: within) == nil, "idle with nothing to write: answers")
        cache.append(hrRecord("A0:9E:1A:00:00:01", 0))
        try await withTimeout { try await cache.flush() }
        #expect(cache.writerStall(within: within) == nil)

        // Frozen after a commit, telling its observer: the thread's own work, which the
        // probe gives the busy timeout (200 ms) and the slack (100 ms).
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        cache.onCommit { _ in
            entered.signal()
            gate.wait()
        }
        cache.append(hrRecord("A0:9E:1A:00:00:01", 1))
        var problem: String?
        let reported = await eventually(timeout: 30) {
            problem = cache.writerStall(within: within)
            return problem != nil
        }
        #expect(reported, "a frozen writer is reported")
        #expect(problem?.hasPrefix("a commit under way for ") == true, "\(problem ?? "nil")")
        #expect(entered.wait(timeout: .now()) == .success, "the writer was in its observer")

        // Records that come meanwhile wait; once the writer goes on it takes them.
        cache.append(hrRecord("A0:9E:1A:00:00:01", 2))
        cache.onCommit(nil)
        gate.signal()
        #expect(await eventually(timeout: 30) { cache.writerStall(within: within) == nil && cache.bufferedCount == 0 })
        try await withTimeout { try await cache.flush() }
        #expect(cache.writerStall(within: within) == nil)
        try await cache.close()
    }
}
