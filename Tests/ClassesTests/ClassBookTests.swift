// SPDX-License-Identifier: MIT
import Classes
import Foundation
import Testing

/// A fixed zone so the tests mean the same on every machine: Europe/Madrid has DST.
private let madrid = try! ZoneCalendar(file: "Europe/Madrid")
private let minute: Int64 = 60_000

/// Unix ms of a Madrid local time.
private func local(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int = 0) -> Int64 {
    var c = Calendar(identifier: .gregorian)
    c.timeZone = TimeZone(identifier: "Europe/Madrid")!
    let date = c.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s))!
    return Int64(date.timeIntervalSince1970 * 1000)
}

@Suite struct ClassBookTests {
    let spin = ScheduledClass(name: "Spin 07:00", type: .cycle, days: [.monday, .wednesday], startMinute: 7 * 60, durationSeconds: 45 * 60)

    @Test func handStartedClassRunsUntilStopped() throws {
        var book = ClassBook()
        let t0 = local(2026, 11, 25, 18, 0)
        let s = try book.start(name: " HIIT ", type: .hiit, at: t0)
        #expect(s.name == "HIIT" && s.origin == .manual && s.isRunning)
        #expect(throws: ClassError.self) { try book.start(name: "Other", type: .run, at: t0 + minute) }
        #expect(book.tick(now: t0 + 90 * minute, schedule: [], calendar: madrid, idleCloseMs: 10 * minute).isEmpty)
        let ended = try book.stop(at: t0 + 50 * minute)
        #expect(ended.endMs == t0 + 50 * minute && ended.key == s.key)
        #expect(book.current == nil && book.finished.map(\.session.key) == [s.key])
        let error = #expect(throws: ClassError.self) { try book.stop(at: t0 + 51 * minute) }
        #expect(error?.code == .noneRunning)
    }

    @Test func emptyOrControlCharacterNamesAreRefused() {
        var book = ClassBook()
        #expect(throws: ClassError.self) { try book.start(name: "  ", type: .run, at: 0) }
        #expect(throws: ClassError.self) { try book.start(name: "a\u{1b}[2J", type: .run, at: 0) }
        #expect(book.current == nil)
    }

    @Test func scheduledClassStartsAndEndsOnTheLocalClock() {
        var book = ClassBook()
        // Wednesday 25 November 2026, 07:10 in Madrid (UTC+1).
        let during = local(2026, 11, 25, 7, 10)
        #expect(book.tick(now: during, schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute).isEmpty)
        let c = try! #require(book.current)
        #expect(c.startMs == local(2026, 11, 25, 7, 0) && c.plannedEndMs == local(2026, 11, 25, 7, 45))
        #expect(c.key == "scheduled/Spin 07:00/\(c.startMs)")
        let ended = book.tick(now: local(2026, 11, 25, 7, 46), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(ended.map(\.endMs) == [local(2026, 11, 25, 7, 45)])
        #expect(book.current == nil)
        // Thursday is not a spin day.
        _ = book.tick(now: local(2026, 11, 26, 7, 10), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(book.current == nil)
    }

    @Test func aScheduledClassStoppedByHandDoesNotStartAgain() throws {
        var book = ClassBook()
        _ = book.tick(now: local(2026, 11, 25, 7, 1), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        _ = try book.stop(at: local(2026, 11, 25, 7, 30))
        _ = book.tick(now: local(2026, 11, 25, 7, 31), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(book.current == nil)
        #expect(book.finished.count == 1)
    }

    @Test func aRestartedGatewayResumesTheSameClass() throws {
        var book = ClassBook()
        _ = book.tick(now: local(2026, 11, 25, 7, 5), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        let saved = try JSONEncoder().encode(book)
        var restored = try JSONDecoder().decode(ClassBook.self, from: saved)
        #expect(restored == book)
        // Down until after the class: it ends at its planned end, not when the gateway came back.
        let ended = restored.tick(now: local(2026, 11, 25, 8, 30), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(ended.map(\.key) == [book.current!.key] && ended[0].endMs == local(2026, 11, 25, 7, 45))
    }

    @Test func scheduleFollowsDaylightSavingAndCrossesMidnight() {
        // 29 March 2026: Madrid moves from UTC+1 to UTC+2; a Monday class the day after.
        let late = ScheduledClass(name: "Night", type: .run, days: [.sunday], startMinute: 23 * 60 + 30, durationSeconds: 60 * 60)
        var book = ClassBook()
        _ = book.tick(now: local(2026, 3, 30, 0, 10), schedule: [late], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(book.current?.startMs == local(2026, 3, 29, 23, 30))
        var monday = ClassBook()
        _ = monday.tick(now: local(2026, 3, 30, 7, 0, 30), schedule: [spin], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(monday.current?.startMs == local(2026, 3, 30, 7, 0))
        #expect(local(2026, 3, 30, 7, 0) - local(2026, 3, 27, 7, 0) == 3 * 86_400_000 - 3_600_000)
    }

    @Test func openGymSessionClosesAfterIdleTime() {
        var book = ClassBook()
        let t0: Int64 = 1_800_000_000_000
        book.heard(device: "A", at: t0)
        book.heard(device: "A", at: t0 + 20 * minute)
        book.heard(device: "B", at: t0 + 5 * minute)
        #expect(book.tick(now: t0 + 14 * minute, schedule: [], calendar: madrid, idleCloseMs: 10 * minute).map(\.device) == [])
        let closed = book.tick(now: t0 + 15 * minute, schedule: [], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(closed.map(\.device) == ["B"])
        #expect(closed[0].startMs == t0 + 5 * minute && closed[0].endMs == t0 + 5 * minute && closed[0].origin == .openGym)
        let a = book.tick(now: t0 + 30 * minute, schedule: [], calendar: madrid, idleCloseMs: 10 * minute)
        #expect(a.map(\.key) == ["open/A/\(t0)"] && a[0].endMs == t0 + 20 * minute)
    }

    @Test func aClassClosesOpenGymAndTakesItsRecords() throws {
        var book = ClassBook()
        let t0: Int64 = 1_800_000_000_000
        book.heard(device: "A", at: t0)
        _ = try book.start(name: "Spin", type: .cycle, at: t0 + minute)
        let closed = book.finished.filter { $0.session.origin == .openGym }
        #expect(closed.map(\.session.key) == ["open/A/\(t0)"])
        book.heard(device: "A", at: t0 + 2 * minute)
        #expect(book.openGym.isEmpty)
        let c = try book.stop(at: t0 + 30 * minute)
        // A late record from inside the class does not open a session; one after it does.
        book.heard(device: "A", at: t0 + 29 * minute)
        #expect(book.openGym.isEmpty)
        book.heard(device: "A", at: c.endMs! + 1000)
        #expect(book.openGym["A"]?.firstMs == c.endMs! + 1000)
    }

    @Test func endedClassesAreForgottenAfterTheirCorrectionWindow() throws {
        var book = ClassBook()
        _ = try book.start(name: "Spin", type: .cycle, at: 0)
        let c = try book.stop(at: 30 * minute)
        book.stored(key: c.key, now: 31 * minute)
        #expect(book.finished.count == 1)
        book.stored(key: c.key, now: c.endMs! + ClassBook.correctionWindowMs)
        #expect(book.finished.isEmpty)
    }

    @Test func weekdaysParseShortAndLongNames() {
        #expect(ScheduledClass.Weekday.parse("Mon") == .monday)
        #expect(ScheduledClass.Weekday.parse("wednesday") == .wednesday)
        #expect(ScheduledClass.Weekday.parse("we") == nil)
        #expect(ScheduledClass.Weekday.parse("sunny") == nil)
    }
}
