// SPDX-License-Identifier: MIT
import Classes
import Config
import Testing

@Suite("[[classes]], [workouts] and [effort]")
struct ClassesConfigTests {
    @Test("defaults: no timetable, 10 min idle close, 2 min shortest workout, max HR 185")
    func defaults() throws {
        let c = try GatewayConfiguration.parse(toml: "")
        #expect(c.classes.isEmpty)
        #expect(c.workouts.idleClose == .seconds(600) && c.workouts.minDuration == .seconds(120) && c.workouts.openGymType == .other)
        #expect(c.effort.defaultMaxHR == 185)
    }

    @Test("a timetable of two classes")
    func timetable() throws {
        let c = try GatewayConfiguration.parse(toml: """
            [[classes]]
            name = "Spin 07:00"
            type = "cycle"
            days = ["mon", "Wednesday"]
            start = "07:00"
            duration = "45m"
            [[classes]]
            name = "HIIT"
            days = ["sat"]
            start = "18:30"
            duration = 1800
            [workouts]
            idle_close = "15m"
            open_gym_type = "strength"
            [effort]
            default_max_hr = 180
            """)
        #expect(c.classes == [
            ScheduledClass(name: "Spin 07:00", type: .cycle, days: [.monday, .wednesday], startMinute: 420, durationSeconds: 2700),
            ScheduledClass(name: "HIIT", type: .other, days: [.saturday], startMinute: 1110, durationSeconds: 1800),
        ])
        #expect(c.workouts.idleClose == .seconds(900) && c.workouts.openGymType == .strength && c.effort.defaultMaxHR == 180)
    }

    @Test("a bad entry names the class, the key and the fix", arguments: [
        ("start = \"7:00\"", "classes[1].start", "HH:MM"),
        ("start = \"24:00\"", "classes[1].start", "HH:MM"),
        ("days = [\"someday\"]", "classes[1].days", "weekday names"),
        ("days = []", "classes[1].days", "at least one day"),
        ("type = \"yoga\"", "classes[1].type", "\"hiit\""),
        ("duration = \"10s\"", "classes[1].duration", "duration"),
        ("room = 2", "classes[1].room", "unknown key"),
    ])
    func badEntry(line: String, key: String, hint: String) throws {
        var lines = ["name = \"Spin\"", "days = [\"mon\"]", "start = \"07:00\"", "duration = \"45m\""]
        let replaced = line.split(separator: " ")[0]
        lines.removeAll { $0.hasPrefix(replaced + " ") }
        lines.append(line)
        let error = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[[classes]]\n" + lines.joined(separator: "\n")) }
        #expect(error?.key == key)
        #expect(error.map { "\($0)".contains(hint) } == true, "\(String(describing: error))")
    }

    @Test("a missing key, a duplicated name and a single table are refused")
    func structure() throws {
        let missing = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[[classes]]\nname = \"Spin\"\ndays = [\"mon\"]\nstart = \"07:00\"") }
        #expect(missing?.key == "classes[1].duration")
        let twice = "[[classes]]\nname = \"A\"\ndays = [\"mon\"]\nstart = \"07:00\"\nduration = \"45m\"\n"
        let duplicated = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: twice + twice) }
        #expect(duplicated?.key == "classes[2].name")
        let single = #expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[classes]\nname = \"A\"") }
        #expect(single?.key == "classes")
    }

    @Test("[workouts] and [effort] ranges")
    func ranges() throws {
        #expect((#expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[workouts]\nidle_close = \"1s\"") })?.key == "workouts.idle_close")
        #expect((#expect(throws: ConfigError.self) { try GatewayConfiguration.parse(toml: "[effort]\ndefault_max_hr = 300") })?.key == "effort.default_max_hr")
    }
}
