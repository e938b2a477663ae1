// SPDX-License-Identifier: MIT
import Classes
import TOMLKit

/// `[[classes]]`: one table per class of the timetable.
func readClasses(_ value: any TOMLValueConvertible, into classes: inout [ScheduledClass]) throws(ConfigError) {
    let example = "[[classes]]\nname = \"Spin 07:00\"\ntype = \"cycle\"\ndays = [\"mon\", \"wed\"]\nstart = \"07:00\"\nduration = \"45m\""
    guard let array = value.array else {
        throw ConfigError(.wrongType, key: "classes", problem: "must be a list of [[classes]] tables, got \(render(value))", example: example)
    }
    for (i, item) in array.enumerated() {
        guard let table = item.table else {
            throw ConfigError(.wrongType, key: "classes[\(i + 1)]", problem: "must be a table, got \(render(item))", example: example)
        }
        let reader = SectionReader(name: "classes", table: table)
        do throws(ConfigError) {
            try reader.checkKeys()
            let entry = try reader.readClass()
            if classes.contains(where: { $0.name == entry.name }) {
                throw ConfigError(.badValue, key: "classes.name", problem: "must be unique, \"\(entry.name)\" is listed twice",
                                  example: ConfigSchema.example("classes", "name"))
            }
            classes.append(entry)
        } catch {
            // `classes.start` → `classes[2].start`: which class, too.
            throw ConfigError(error.code, key: "classes[\(i + 1)]" + error.key.dropFirst("classes".count),
                              problem: error.problem, example: error.example)
        }
    }
}

extension SectionReader {
    func readClass() throws(ConfigError) -> ScheduledClass {
        for key in ["name", "days", "start", "duration"] where table[key] == nil {
            throw ConfigError(.badValue, key: "classes.\(key)", problem: "is required", example: ConfigSchema.example("classes", key))
        }
        let name = try string("name")!
        let type = try choice("type", ClassType.self) ?? .other
        var days = Set<ScheduledClass.Weekday>()
        for day in try strings("days")! {
            guard let d = ScheduledClass.Weekday.parse(day) else {
                throw ConfigError(.badValue, key: "classes.days", problem: "must be weekday names (mon, tue, … sun), got \"\(day)\"",
                                  example: ConfigSchema.example("classes", "days"))
            }
            days.insert(d)
        }
        if days.isEmpty {
            throw ConfigError(.badValue, key: "classes.days", problem: "must name at least one day", example: ConfigSchema.example("classes", "days"))
        }
        let startText = try string("start")!
        guard let minute = Self.minuteOfDay(startText) else {
            throw ConfigError(.badValue, key: "classes.start", problem: "must be a local time HH:MM (00:00 to 23:59), got \"\(startText)\"",
                              example: ConfigSchema.example("classes", "start"))
        }
        let duration = try self.duration("duration", min: .seconds(60), max: .seconds(12 * 3600))!
        return ScheduledClass(name: name, type: type, days: days, startMinute: minute, durationSeconds: Int(duration.components.seconds))
    }

    func read(into w: inout GatewayConfiguration.Workouts) throws(ConfigError) {
        if let d = try duration("idle_close", min: .seconds(10), max: .seconds(12 * 3600)) { w.idleClose = d }
        if let d = try duration("min_duration", min: .seconds(0), max: .seconds(3600)) { w.minDuration = d }
        if let t = try choice("open_gym_type", ClassType.self) { w.openGymType = t }
    }

    func read(into e: inout GatewayConfiguration.Effort) throws(ConfigError) {
        if let m = try int("default_max_hr", 120...230) { e.defaultMaxHR = m }
    }

    /// `"07:00"` → 420.
    static func minuteOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return h * 60 + m
    }
}
