// SPDX-License-Identifier: MIT
import TOMLKit

#if canImport(Glibc)
import Glibc
#endif

extension GatewayConfiguration {
    /// Reads and validates a configuration file.
    public static func load(path: String) throws(ConfigError) -> GatewayConfiguration {
        let text = try SecretFile.readText(path: path, key: path)
        return try parse(toml: text)
    }

    /// `path` when given; otherwise the default file when it exists, else the defaults.
    /// Commands that only read the cache (`blegate cache stats`) work on a machine that
    /// was never configured.
    public static func loadOrDefaults(path: String?) throws(ConfigError) -> GatewayConfiguration {
        if let path { return try load(path: path) }
        var st = stat()
        if stat(defaultPath, &st) != 0, errno == ENOENT { return GatewayConfiguration() }
        return try load(path: defaultPath)
    }

    /// Validates a TOML document. Every key is optional; unknown keys are errors.
    public static func parse(toml: String) throws(ConfigError) -> GatewayConfiguration {
        let root: TOMLTable
        do {
            root = try TOMLTable(string: toml)
        } catch let e as TOMLParseError {
            throw ConfigError(.syntax, key: "line \(e.source.begin.line), column \(e.source.begin.column)",
                              problem: "not valid TOML (\(e.description))",
                              example: #"[backend]\#nbatch_size = 500"#)
        } catch {
            throw ConfigError(.syntax, key: "file", problem: "not valid TOML (\(error))")
        }
        var config = GatewayConfiguration()
        let sectionNames = ConfigSchema.sections.map(\.name)
        for (name, value) in root {
            guard sectionNames.contains(name) else {
                let hint = ConfigSchema.suggestion(for: name, among: sectionNames, elsewhere: ConfigSchema.allDottedKeys)
                let isSectionHint = hint.map { sectionNames.contains($0) } ?? false
                throw ConfigError(.unknownKey, key: name,
                                  problem: "unknown " + (value.type == .table ? "section" : "key")
                                      + (hint.map { " (did you mean \(isSectionHint ? "[\($0)]" : $0)?)" } ?? "")
                                      + "; known sections: " + sectionNames.map { "[\($0)]" }.joined(separator: ", "),
                                  example: hint.map { h in
                                      isSectionHint ? "[\(h)]" : ConfigSchema.example(String(h.split(separator: ".")[0]), String(h.split(separator: ".")[1]))
                                  } ?? "[gateway]")
            }
            if name == "classes" {
                try readClasses(value, into: &config.classes)
                continue
            }
            guard let table = value.table else {
                throw ConfigError(.wrongType, key: name, problem: "must be a section [\(name)], got \(render(value))",
                                  example: "[\(name)]")
            }
            if name == "members" {
                try readMembers(table, into: &config.members)
                continue
            }
            let section = SectionReader(name: name, table: table)
            try section.checkKeys()
            switch name {
            case "gateway": try section.read(into: &config.gateway)
            case "bluetooth": try section.read(into: &config.bluetooth)
            case "hrv": try section.read(into: &config.hrv)
            case "cache": try section.read(into: &config.cache)
            case "backend": try section.read(into: &config.backend)
            case "display": try section.read(into: &config.display)
            case "coach": try section.read(into: &config.coach)
            case "metrics": try section.read(into: &config.metrics)
            case "workouts": try section.read(into: &config.workouts)
            case "effort": try section.read(into: &config.effort)
            default: try section.read(into: &config.status)
            }
        }
        if config.bluetooth.connect == .list, config.bluetooth.allow.isEmpty {
            throw ConfigError(.badValue, key: "bluetooth.allow",
                              problem: #"must name at least one address or name pattern when connect = "list""#,
                              example: ConfigSchema.example("bluetooth", "allow"))
        }
        return config
    }
}

/// `[members."A0:9E:1A:12:34:56"]` or `[members."<client id>"]`: one table per member.
func readMembers(_ table: TOMLTable, into members: inout [String: GatewayConfiguration.Member]) throws(ConfigError) {
    for (key, value) in table {
        guard let memberTable = value.table else {
            throw ConfigError(.wrongType, key: "members.\(key)",
                              problem: "must be a table per member, keyed by strap address or client id, got \(render(value))",
                              example: "[members.\"A0:9E:1A:12:34:56\"]\nname = \"Ana\"\nage = 34")
        }
        let id = DevicePattern.isAddress(key) ? key.uppercased() : key
        let reader = SectionReader(name: "members", table: memberTable)
        do throws(ConfigError) {
            try reader.checkKeys()
            members[id] = try reader.readMember()
        } catch {
            // `members.age` → `members."A0:9E:1A:12:34:56".age`: which member, too.
            throw ConfigError(error.code, key: "members.\"\(key)\"" + error.key.dropFirst("members".count),
                              problem: error.problem, example: error.example)
        }
    }
}

/// A value as the user wrote it, for "got ..." in messages.
func render(_ v: any TOMLValueConvertible) -> String {
    switch v.type {
    case .string: return "\"" + (v.string ?? "") + "\""
    case .int: return v.int.map(String.init) ?? "?"
    case .double: return v.double.map { "\($0)" } ?? "?"
    case .bool: return v.bool.map { $0 ? "true" : "false" } ?? "?"
    case .table: return "a table"
    case .array:
        guard let a = v.array else { return "an array" }
        return "[" + a.map { render($0) }.joined(separator: ", ") + "]"
    default: return "a \(v.type)"
    }
}

/// Hostname for the default `gateway.id`.
func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "blegate" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "blegate" : name
}
