// SPDX-License-Identifier: MIT
import TOMLKit

/// Reads one `[section]`: each accessor checks type, range and form, and throws a
/// `ConfigError` naming `section.key` with the section's example for that key.
struct SectionReader {
    let name: String
    let table: TOMLTable

    func checkKeys() throws(ConfigError) {
        let known = ConfigSchema.keys(of: name)
        let elsewhere = ConfigSchema.allDottedKeys.filter { !$0.hasPrefix(name + ".") }
        for key in table.keys where !known.contains(key) {
            let hint = ConfigSchema.suggestion(for: key, among: known, elsewhere: elsewhere)
            let dotted = hint.map { $0.utf8.contains(UInt8(ascii: ".")) ? $0 : name + "." + $0 }
            let example: String
            if let dotted {
                let parts = dotted.split(separator: ".").map(String.init)
                example = parts[0] == name ? ConfigSchema.example(parts[0], parts[1]) : "[\(parts[0])] " + ConfigSchema.example(parts[0], parts[1])
            } else {
                example = ConfigSchema.example(name, known[0])
            }
            throw ConfigError(.unknownKey, key: "\(name).\(key)",
                              problem: "unknown key" + (dotted.map { " (did you mean \($0)?)" } ?? "")
                                  + "; [\(name)] knows " + known.joined(separator: ", "),
                              example: example)
        }
    }

    private func fail(_ code: ConfigError.Code, _ key: String, _ problem: String) -> ConfigError {
        ConfigError(code, key: "\(name).\(key)", problem: problem, example: ConfigSchema.example(name, key))
    }

    // MARK: Typed accessors (nil = key absent)

    func string(_ key: String, nonEmpty: Bool = true) throws(ConfigError) -> String? {
        guard let v = table[key] else { return nil }
        guard let s = v.string else { throw fail(.wrongType, key, "must be a string, got \(render(v))") }
        if nonEmpty, s.isEmpty { throw fail(.badValue, key, "must not be empty") }
        if s.unicodeScalars.contains(where: { $0.value < 0x20 }) { throw fail(.badValue, key, "must not contain control characters, got \(render(v))") }
        return s
    }

    func path(_ key: String, absolute: Bool) throws(ConfigError) -> String? {
        guard let s = try string(key) else { return nil }
        if absolute, !s.hasPrefix("/") { throw fail(.badValue, key, "must be an absolute path, got \"\(s)\"") }
        return s
    }

    func int(_ key: String, _ range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let v = table[key] else { return nil }
        let what = "must be an integer from \(range.lowerBound) to \(range.upperBound)"
        guard v.type == .int, let i = v.int else { throw fail(.wrongType, key, "\(what), got \(render(v))") }
        guard range.contains(i) else { throw fail(.outOfRange, key, "\(what), got \(i)") }
        return i
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let v = table[key] else { return nil }
        guard let b = v.bool else { throw fail(.wrongType, key, "must be true or false, got \(render(v))") }
        return b
    }

    func choice<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) throws(ConfigError) -> E? where E.RawValue == String {
        guard let v = table[key] else { return nil }
        let allowed = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard let s = v.string else { throw fail(.wrongType, key, "must be \(allowed), got \(render(v))") }
        guard let e = E(rawValue: s) else { throw fail(.badValue, key, "must be \(allowed), got \(render(v))") }
        return e
    }

    func duration(_ key: String, min: Duration, max: Duration) throws(ConfigError) -> Duration? {
        guard let v = table[key] else { return nil }
        return try duration(v, key: key, min: min, max: max)
    }

    func duration(_ v: any TOMLValueConvertible, key: String, min: Duration, max: Duration) throws(ConfigError) -> Duration {
        let form = #"a number of seconds or a string with a unit ("250ms", "5s", "10m", "2h", "7d")"#
        let d: Duration?
        switch v.type {
        case .int: d = v.int.flatMap { ConfigDuration.seconds(Double($0)) }
        case .double: d = v.double.flatMap { ConfigDuration.seconds($0) }
        case .string: d = v.string.flatMap { ConfigDuration.parse($0) }
        default: throw fail(.wrongType, key, "must be a duration: \(form), got \(render(v))")
        }
        guard let d else { throw fail(.badDuration, key, "must be a duration: \(form), got \(render(v))") }
        guard d >= min, d <= max else {
            throw fail(.outOfRange, key, "must be from \(ConfigDuration.format(min)) to \(ConfigDuration.format(max)), got \(render(v))")
        }
        return d
    }

    func size(_ key: String, min: Int64) throws(ConfigError) -> Int64? {
        guard let v = table[key] else { return nil }
        let form = #"a number of bytes or a string with a unit ("512MiB", "2GiB")"#
        let bytes: Int64?
        switch v.type {
        case .int: bytes = v.int.flatMap { $0 >= 0 ? Int64($0) : nil }
        case .string: bytes = v.string.flatMap { ByteSize.parse($0) }
        default: throw fail(.wrongType, key, "must be a size: \(form), got \(render(v))")
        }
        guard let bytes else { throw fail(.badSize, key, "must be a size: \(form), got \(render(v))") }
        guard bytes >= min else { throw fail(.outOfRange, key, "must be at least \(ByteSize.format(min)), got \(render(v))") }
        return bytes
    }

    func array(_ key: String) throws(ConfigError) -> [any TOMLValueConvertible]? {
        guard let v = table[key] else { return nil }
        guard let a = v.array else { throw fail(.wrongType, key, "must be an array, got \(render(v))") }
        return a.map { $0 }
    }

    func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let items = try array(key) else { return nil }
        var out: [String] = []
        for item in items {
            guard let s = item.string, !s.isEmpty else {
                throw fail(item.type == .string ? .badValue : .wrongType, key, "must be an array of non-empty strings, got \(render(item)) in it")
            }
            out.append(s)
        }
        return out
    }

    // MARK: Sections

    func read(into g: inout GatewayConfiguration.Gateway) throws(ConfigError) {
        if let id = try string("id") {
            guard id.count <= 128 else { throw fail(.badValue, "id", "must be at most 128 characters, got \(id.count)") }
            g.id = id
        }
        if let dir = try path("state_directory", absolute: true) { g.stateDirectory = dir }
    }

    func read(into b: inout GatewayConfiguration.Bluetooth) throws(ConfigError) {
        if let adapters = try strings("adapters") {
            for a in adapters where !isAdapterName(a) {
                throw fail(.badValue, "adapters", "must list adapter names such as \"hci0\", got \"\(a)\"")
            }
            b.adapters = adapters
        }
        if let c = try choice("connect", GatewayConfiguration.ConnectPolicy.self) { b.connect = c }
        if let allow = try strings("allow") { b.allow = allow.map(DevicePattern.init) }
        if let deny = try strings("deny") { b.deny = deny.map(DevicePattern.init) }
        if let n = try int("max_per_adapter", 1...64) { b.maxLinks = n }
        try readMaxLinks(into: &b)
        if let p = try strings("priority") { b.priority = p.map(DevicePattern.init) }
        if let n = try choice("notify", GatewayConfiguration.NotifyMethod.self) { b.notify = n }
        if let r = try bool("adapter_reset") { b.adapterReset = r }
        if let d = try duration("scan_burst", min: .seconds(1), max: .seconds(600)) { b.scanBurst = d }
        if let d = try duration("scan_every", min: .zero, max: .seconds(3600)) { b.scanEvery = d }
        if b.scanEvery != .zero, b.scanEvery <= b.scanBurst {
            throw fail(.outOfRange, "scan_every", "must be longer than scan_burst (\(ConfigDuration.format(b.scanBurst))), or 0 to scan all the time, "
                       + "got \(ConfigDuration.format(b.scanEvery))")
        }
    }

    /// `max_links = 7` for every adapter, or a table by adapter name or address
    /// (`max_links = { hci0 = 5, "00:1A:7D:DA:71:13" = 10, default = 7 }`).
    private func readMaxLinks(into b: inout GatewayConfiguration.Bluetooth) throws(ConfigError) {
        guard let v = table["max_links"] else { return }
        let range = 1...64
        if v.type == .int {
            b.maxLinks = try int("max_links", range)!
            return
        }
        guard let t = v.table else {
            throw fail(.wrongType, "max_links", "must be an integer from 1 to 64, or a table of adapter name or address = integer, got \(render(v))")
        }
        for key in t.keys.sorted() {
            let item = t[key]!
            guard item.type == .int, let n = item.int, range.contains(n) else {
                throw fail(.outOfRange, "max_links", "\(key) must be an integer from 1 to 64, got \(render(item))")
            }
            if key == "default" {
                b.maxLinks = n
            } else if isAdapterName(key) || DevicePattern.isAddress(key) {
                b.maxLinksByAdapter[DevicePattern.isAddress(key) ? key.uppercased() : key] = n
            } else {
                throw fail(.badValue, "max_links", "keys must be adapter names (hci0), adapter addresses or default, got \"\(key)\"")
            }
        }
    }

    func read(into h: inout GatewayConfiguration.HRV) throws(ConfigError) {
        guard let items = try array("windows") else { return }
        var windows: [Duration] = []
        for item in items {
            let w = try duration(item, key: "windows", min: .seconds(10), max: .seconds(3600))
            guard !windows.contains(w) else { throw fail(.badValue, "windows", "must not list a window twice, got \(render(item)) twice") }
            windows.append(w)
        }
        h.windows = windows
    }

    func read(into c: inout GatewayConfiguration.Cache) throws(ConfigError) {
        if let f = try string("file") { c.file = f }
        if let r = try duration("retention", min: .seconds(60), max: .seconds(3650 * 86_400)) { c.retention = r }
        if let s = try size("max_size", min: 1_048_576) { c.maxSize = s }
        if let d = try bool("delete_unsynced") { c.deleteUnsynced = d }
        if let k = try string("encryption_key_file", nonEmpty: false) {
            if k.isEmpty { c.encryptionKeyFile = nil } else {
                guard k.hasPrefix("/") else { throw fail(.badValue, "encryption_key_file", "must be an absolute path, got \"\(k)\"") }
                c.encryptionKeyFile = k
            }
        }
    }

    func read(into b: inout GatewayConfiguration.Backend) throws(ConfigError) {
        if let url = try string("url") {
            guard isHTTPURL(url) else { throw fail(.badValue, "url", "must be an http:// or https:// URL with a host, got \"\(url)\"") }
            b.url = url
        }
        if let t = try string("token_file", nonEmpty: false) {
            if t.isEmpty { b.tokenFile = nil } else {
                guard t.hasPrefix("/") else { throw fail(.badValue, "token_file", "must be an absolute path, got \"\(t)\"") }
                b.tokenFile = t
            }
        }
        if let s = try choice("sink", GatewayConfiguration.Sink.self) { b.sink = s }
        if let p = try string("samples_path") {
            guard p.hasPrefix("/"), !p.utf8.contains(UInt8(ascii: " ")) else { throw fail(.badValue, "samples_path", "must be a URL path starting with /, got \"\(p)\"") }
            b.samplesPath = p
        }
        if let n = try int("batch_size", 1...10_000) { b.batchSize = n }
        if let i = try duration("interval", min: .milliseconds(100), max: .seconds(3600)) { b.interval = i }
        if let u = try choice("unpaired", GatewayConfiguration.UnpairedPolicy.self) { b.unpaired = u }
    }

    /// `listen`: "" turns the listener off (nil), anything else must be host:port.
    private func listen(_ current: inout GatewayConfiguration.ListenAddress?, off: String) throws(ConfigError) {
        guard let l = try string("listen", nonEmpty: false) else { return }
        if l.isEmpty { current = nil; return }
        guard let address = GatewayConfiguration.ListenAddress.parse(l) else {
            throw fail(.badValue, "listen", "must be \"host:port\" (port 0 to 65535), or \"\" for \(off), got \"\(l)\"")
        }
        current = address
    }

    func read(into m: inout GatewayConfiguration.Metrics) throws(ConfigError) {
        try listen(&m.listen, off: "no metrics")
    }

    func read(into d: inout GatewayConfiguration.Display) throws(ConfigError) {
        try listen(&d.listen, off: "no wall")
        if let g = try string("gym_name") {
            guard g.count <= 80 else { throw fail(.badValue, "gym_name", "must be at most 80 characters, got \(g.count)") }
            d.gymName = g
        }
        if let r = try string("room") {
            guard r.count <= 80 else { throw fail(.badValue, "room", "must be at most 80 characters, got \(r.count)") }
            d.room = r
        }
        if let b = try number("low_battery", 0...1) { d.lowBattery = b }
    }

    func read(into c: inout GatewayConfiguration.Coach) throws(ConfigError) {
        if let f = try string("pin_file", nonEmpty: false) {
            if f.isEmpty { c.pinFile = nil } else {
                guard f.hasPrefix("/") else { throw fail(.badValue, "pin_file", "must be an absolute path, got \"\(f)\"") }
                c.pinFile = f
            }
        }
    }

    func readMember() throws(ConfigError) -> GatewayConfiguration.Member {
        var m = GatewayConfiguration.Member()
        if let n = try string("name") {
            guard n.count <= 40 else { throw fail(.badValue, "name", "must be at most 40 characters, got \(n.count)") }
            m.name = n
        }
        m.age = try int("age", 10...100)
        m.maxHR = try int("max_hr", 100...230)
        m.restingHR = try int("resting_hr", 30...120)
        m.weightKg = try number("weight_kg", 25...300)
        m.sex = try choice("sex", GatewayConfiguration.Sex.self)
        if let list = try strings("machines") {
            for a in list where !DevicePattern.isAddress(a) {
                throw fail(.badValue, "machines", "must be machine addresses such as \"C4:7C:8D:6A:21:0F\", got \"\(a)\"")
            }
            m.machines = list.map { $0.uppercased() }
        }
        if let r = m.restingHR, let x = m.maxHR, r >= x {
            throw fail(.badValue, "resting_hr", "must be below max_hr (\(x)), got \(r)")
        }
        return m
    }

    func number(_ key: String, _ range: ClosedRange<Double>) throws(ConfigError) -> Double? {
        guard let v = table[key] else { return nil }
        let what = "must be a number from \(range.lowerBound) to \(range.upperBound)"
        let d: Double?
        switch v.type {
        case .int: d = v.int.map(Double.init)
        case .double: d = v.double
        default: throw fail(.wrongType, key, "\(what), got \(render(v))")
        }
        guard let d, d.isFinite, range.contains(d) else { throw fail(.outOfRange, key, "\(what), got \(render(v))") }
        return d
    }

    func read(into s: inout GatewayConfiguration.Status) throws(ConfigError) {
        if let p = try path("socket", absolute: true) { s.socket = p }
    }
}

func isAdapterName(_ s: String) -> Bool {
    s.hasPrefix("hci") && s.count > 3 && s.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
}

/// `http(s)://host[:port][/path]` with a non-empty host and no spaces.
func isHTTPURL(_ s: String) -> Bool {
    let rest: Substring
    if s.hasPrefix("https://") { rest = s.dropFirst(8) } else if s.hasPrefix("http://") { rest = s.dropFirst(7) } else { return false }
    // Bytes, not `contains(" ")`: with Foundation imported anywhere in the module that
    // resolves to NSString's locale-aware search, which pages in CoreFoundation's Unicode
    // tables for the life of `blegate run` (docs/benchmarks.md measures its memory).
    guard !s.utf8.contains(UInt8(ascii: " ")) else { return false }
    let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    let hostOnly = host.hasPrefix("[") ? host : host.split(separator: ":", maxSplits: 1).first ?? ""
    return !hostOnly.isEmpty
}
