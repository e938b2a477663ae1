// SPDX-License-Identifier: MIT
@testable import Sync
import Testing
import WearMetrics
import Timing

@Suite("Retry-After and backoff")
struct PolicyTests {
    static let now = UTCTimestamp(millisecondsSince1970: 784_111_777_000) // Sun, 06 Nov 1994 08:49:37 GMT

    @Test("delay-seconds and the three HTTP-date forms")
    func retryAfterForms() {
        #expect(RetryAfter.parse("120", now: Self.now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: Self.now) == .zero)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:47 GMT", now: Self.now) == .seconds(10))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:50:37 GMT", now: Self.now) == .seconds(60))
        #expect(RetryAfter.parse("Sun Nov  6 08:49:38 1994", now: Self.now) == .seconds(1))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: Self.now) == .zero)
        #expect(RetryAfter.parse("soon", now: Self.now) == nil)
        #expect(RetryAfter.parse("-5", now: Self.now) == nil)
        #expect(RetryAfter.httpDate(Self.now) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("full jitter stays within a window that doubles up to the cap")
    func backoffWindows() {
        let p = Backoff(base: .seconds(1), cap: .seconds(30))
        #expect(p.window(afterFailures: 1) == .seconds(1))
        #expect(p.window(afterFailures: 4) == .seconds(8))
        #expect(p.window(afterFailures: 6) == .seconds(30))
        #expect(p.window(afterFailures: 500) == .seconds(30))
        var spread = Set<Int64>()
        for _ in 0..<200 {
            let d = p.delay(afterFailures: 3)
            #expect(d >= .zero && d <= .seconds(4))
            spread.insert(d.milliseconds)
        }
        #expect(spread.count > 20)
    }
}
