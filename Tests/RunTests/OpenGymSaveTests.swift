// SPDX-License-Identifier: MIT
import BlegateTestSupport
import Cache
import Classes
@testable import BlegateRun
import Foundation
import Logging
import Testing
import Timing
import WearMetrics

/// Open gym follows a member by every heart rate heard, but its book is saved to the
/// minute: a strap heard every second does not rewrite it (and sync the cache's file)
/// every few seconds, and a restart takes what the last save left out from the cache.
@Suite("Open-gym sessions saved to the minute")
struct OpenGymSaveTests {
    static let strap = "A0:9E:1A:00:00:07"

    @Test("saved when a session opens and when its last record moves into another minute; a restart extends it from the cached records")
    func savedToTheMinute() async throws {
        let f = try RunFixture()
        let cache = try RecordCache(path: f.dir + "/cache.sqlite", options: CacheOptions(groupCommitInterval: .milliseconds(20)))
        // A minute boundary an hour ago.
        let t0 = (UTCTimestamp.now.millisecondsSince1970 / 60_000) * 60_000 - 3_600_000
        let clock = WorkoutCorrectionTests.TestWallClock(t0)
        func keeper() -> ClassKeeper {
            let assembler = WorkoutAssembler(gatewayID: "gw-test", cache: cache, outbox: cache, members: [:], defaultMaxHR: 185,
                                             learnedMaxHR: { [:] }, make: WorkoutAssembler.compute)
            var logger = Logger(label: "test.classes")
            logger.logLevel = .critical
            return ClassKeeper(settings: .init(gatewayID: "gw-test", schedule: [], idleCloseMs: 600_000, minDurationMs: 60_000,
                                               openGymType: .other, now: { clock.ms }),
                               cache: cache, workouts: assembler, logger: logger)
        }
        func savedLastMs() async throws -> Int64? {
            guard let text = try await cache.loadMetaText(key: ClassKeeper.bookKey) else { return nil }
            return try JSONDecoder().decode(ClassBook.self, from: Data(text.utf8)).openGym[Self.strap]?.lastMs
        }
        let first = keeper()
        func hear(_ seconds: Int64) async {
            let beat = WorkoutCorrectionTests.beat(Self.strap, t0 + seconds * 1000, 110)
            cache.append(beat)
            first.heard([beat])
            await first.saveIfChanged()
        }

        await hear(1)
        #expect(try await savedLastMs() == t0 + 1000, "a session that opens is saved")
        await hear(30)
        #expect(try await savedLastMs() == t0 + 1000, "a record in the same minute does not save the book")
        await hear(61)
        #expect(try await savedLastMs() == t0 + 61_000, "a record in the next minute does")
        await hear(90)
        #expect(try await savedLastMs() == t0 + 61_000)
        try await cache.flush()

        // A restart: the saved book says the strap was last heard at 61 s, the cache holds
        // its record of 90 s. Ten minutes (the idle close) after 61 s, the session is still
        // open, with 29 s to go: it ends ten minutes after 90 s.
        clock.set(t0 + 661_000)
        let second = keeper()
        await second.restore()
        #expect(second.nextTick() == 29)
        try await cache.close()
    }
}
