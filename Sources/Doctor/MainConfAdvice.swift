// SPDX-License-Identifier: MIT

/// What in main.conf makes heart-rate straps misbehave, and the exact line to change.
/// Defaults are BlueZ 5.66's (and, for the LE connection parameters, the kernel's:
/// 30-50 ms interval, latency 0, 420 ms supervision timeout).
public enum MainConfAdvice {
    public static let defaultPath = "/etc/bluetooth/main.conf"

    /// Every main.conf check for one file. `text` nil: the file is absent or unreadable.
    public static func checks(text: String?, path: String = defaultPath) -> [DoctorCheck] {
        guard let text else {
            return [.warn("main.conf", "\(path) not found: bluetoothd runs on its built-in defaults",
                          fix: "install bluez (sudo apt-get install bluez), which ships \(path)")]
        }
        let conf = MainConf(text: text)
        var checks: [DoctorCheck] = []
        if let bad = conf.malformed.first {
            checks.append(.fail("main.conf", "line \(bad.line) (\"\(bad.text)\") is not a [Section] or Key = value line; bluetoothd then ignores the whole file",
                                fix: "correct or comment out line \(bad.line) of \(path) (start it with #), then: sudo systemctl restart bluetooth"))
        } else {
            checks.append(.ok("main.conf", "\(path) read"))
        }
        checks.append(cache(conf, path))
        checks.append(contentsOf: connectionParameters(conf, path))
        checks.append(temporaryTimeout(conf, path))
        checks.append(autoEnable(conf, path))
        return checks
    }

    static func setLine(_ section: String, _ line: String, _ path: String) -> String {
        "in \(path), under [\(section)] set `\(line)` (uncommented), then: sudo systemctl restart bluetooth"
    }

    static func cache(_ conf: MainConf, _ path: String) -> DoctorCheck {
        let name = "main.conf [GATT] Cache"
        guard let entry = conf.value("GATT", "Cache") else {
            return .ok(name, "always (default): a strap's services are remembered across reconnects")
        }
        switch entry.value.lowercased() {
        case "always":
            return .ok(name, "always: a strap's services are remembered across reconnects")
        case "yes":
            return .warn(name, "yes (line \(entry.line)) caches only paired devices, and straps are not paired: every reconnect re-discovers all services (about a second more, per strap, each time)",
                         fix: setLine("GATT", "Cache = always", path))
        case "no":
            return .warn(name, "no (line \(entry.line)): every reconnect re-discovers all services and bluetoothd removes a strap's characteristic objects at each disconnect",
                         fix: setLine("GATT", "Cache = always", path))
        default:
            return .fail(name, "\"\(entry.value)\" (line \(entry.line)) is not always, yes or no",
                         fix: setLine("GATT", "Cache = always", path))
        }
    }

    struct LEValue {
        var value: Int
        var line: Int?
    }

    /// Units: intervals 1.25 ms, supervision timeout 10 ms (as in main.conf and HCI).
    static func connectionParameters(_ conf: MainConf, _ path: String) -> [DoctorCheck] {
        var problems: [DoctorCheck] = []
        func read(_ key: String, default value: Int, range: ClosedRange<Int>, example: Int) -> LEValue? {
            guard let entry = conf.value("LE", key), !entry.value.isEmpty else { return LEValue(value: value, line: nil) }
            guard let n = Int(entry.value), range.contains(n) else {
                problems.append(.fail("main.conf [LE] \(key)", "\"\(entry.value)\" (line \(entry.line)) must be an integer from \(range.lowerBound) to \(range.upperBound)",
                                      fix: setLine("LE", "\(key) = \(example)", path)))
                return nil
            }
            return LEValue(value: n, line: entry.line)
        }
        let minInterval = read("MinConnectionInterval", default: 24, range: 6...3200, example: 24)
        let maxInterval = read("MaxConnectionInterval", default: 40, range: 6...3200, example: 40)
        let latency = read("ConnectionLatency", default: 0, range: 0...499, example: 0)
        let timeout = read("ConnectionSupervisionTimeout", default: 42, range: 10...3200, example: 400)
        guard let minInterval, let maxInterval, let latency, let timeout else { return problems }

        func ms(interval: Int) -> String { formatMilliseconds(Double(interval) * 1.25) }
        let name = "main.conf [LE] connection parameters"
        let summary = "interval \(ms(interval: minInterval.value))-\(ms(interval: maxInterval.value)), latency \(latency.value), supervision timeout \(timeout.value * 10) ms"
        if minInterval.value > maxInterval.value {
            return [.fail(name, "MinConnectionInterval \(minInterval.value) is above MaxConnectionInterval \(maxInterval.value): the controller refuses every connection with these",
                          fix: setLine("LE", "MinConnectionInterval = 24` and `MaxConnectionInterval = 40", path))]
        }
        // Core spec: the supervision timeout must exceed (1 + latency) * interval * 2.
        let needed = Double(1 + latency.value) * Double(maxInterval.value) * 1.25 * 2
        if Double(timeout.value * 10) <= needed {
            let fixed = max(400, Int((needed / 10).rounded(.up)) + 1)
            return [.fail(name, "\(summary): the supervision timeout must be above (1 + latency) x max interval x 2 = \(formatMilliseconds(needed)), so connections are refused",
                          fix: setLine("LE", "ConnectionSupervisionTimeout = \(fixed)", path))]
        }
        var advice: [String] = []
        var fixes: [String] = []
        if minInterval.value < 24 {
            advice.append("a minimum interval under 30 ms leaves a controller with 7 straps too little airtime, and it refuses or drops connections")
            fixes.append("MinConnectionInterval = 24")
        }
        if timeout.value < 200 {
            advice.append("a \(timeout.value * 10) ms supervision timeout drops a strap whenever a body or the Pi's Wi-Fi blocks the radio that long")
            fixes.append("ConnectionSupervisionTimeout = 400")
        }
        if advice.isEmpty {
            return [.ok(name, summary)]
        }
        let fix = "in \(path), under [LE] set " + fixes.map { "`\($0)`" }.joined(separator: " and ") + " (units: 1.25 ms and 10 ms), then: sudo systemctl restart bluetooth"
        return [.warn(name, summary + ": " + advice.joined(separator: "; "), fix: fix)]
    }

    static func temporaryTimeout(_ conf: MainConf, _ path: String) -> DoctorCheck {
        let name = "main.conf [General] TemporaryTimeout"
        guard let entry = conf.value("General", "TemporaryTimeout") else {
            return .ok(name, "30 s (default): unconnected devices not heard for 30 s are forgotten")
        }
        guard let seconds = Int(entry.value), seconds >= 0 else {
            return .fail(name, "\"\(entry.value)\" (line \(entry.line)) is not a number of seconds",
                         fix: setLine("General", "TemporaryTimeout = 30", path))
        }
        if seconds == 0 {
            return .warn(name, "0 (line \(entry.line)) turns the removal timer off: every phone that walks past (a new random address every few minutes) stays in bluetoothd, and the object tree grows all day",
                         fix: setLine("General", "TemporaryTimeout = 30", path))
        }
        if seconds < 30 {
            return .warn(name, "\(seconds) s (line \(entry.line)): a strap that drops out for a moment is forgotten before it is reconnected, and has to be discovered again",
                         fix: setLine("General", "TemporaryTimeout = 30", path))
        }
        if seconds > 600 {
            return .warn(name, "\(seconds) s (line \(entry.line)): phones that walk past stay in bluetoothd for long, and the object tree grows",
                         fix: setLine("General", "TemporaryTimeout = 300", path))
        }
        return .ok(name, "\(seconds) s")
    }

    static func autoEnable(_ conf: MainConf, _ path: String) -> DoctorCheck {
        let name = "main.conf [Policy] AutoEnable"
        guard let entry = conf.value("Policy", "AutoEnable") else {
            return .ok(name, "true (default since BlueZ 5.65): adapters are powered when they appear")
        }
        switch entry.value.lowercased() {
        case "true": return .ok(name, "true: adapters are powered when they appear")
        case "false":
            return .warn(name, "false (line \(entry.line)): after a power cut or a replug the adapter stays off until something powers it",
                         fix: setLine("Policy", "AutoEnable = true", path))
        default:
            return .fail(name, "\"\(entry.value)\" (line \(entry.line)) is not true or false",
                         fix: setLine("Policy", "AutoEnable = true", path))
        }
    }

    static func formatMilliseconds(_ ms: Double) -> String {
        ms == ms.rounded() ? "\(Int(ms)) ms" : "\(ms) ms"
    }
}

/// bluetoothd's plugin switches (`-P battery`, `--noplugin=battery`, `-p a,b`): only
/// the running daemon's command line says whether the battery plugin is loaded.
public enum BluetoothdPlugins {
    /// Whether `plugin` is enabled for a bluetoothd started with `arguments` (argv
    /// without argv[0]). Patterns may use `*` as bluetoothd's fnmatch does.
    public static func isEnabled(_ plugin: String, arguments: [String]) -> Bool {
        var only: [String] = []
        var excluded: [String] = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            func value(_ short: String, _ long: String) -> String? {
                if arg == short || arg == long { i += 1; return i < arguments.count ? arguments[i] : nil }
                if arg.hasPrefix(long + "=") { return String(arg.dropFirst(long.count + 1)) }
                if arg.hasPrefix(short) && arg.count > short.count { return String(arg.dropFirst(short.count)) }
                return nil
            }
            if let v = value("-p", "--plugin") { only += v.split(whereSeparator: { $0 == "," || $0 == ":" || $0 == " " }).map(String.init) }
            else if let v = value("-P", "--noplugin") { excluded += v.split(whereSeparator: { $0 == "," || $0 == ":" || $0 == " " }).map(String.init) }
            i += 1
        }
        if !only.isEmpty && !only.contains(where: { matches($0, plugin) }) { return false }
        return !excluded.contains { matches($0, plugin) }
    }

    /// fnmatch with `*` and `?` only: enough for plugin names.
    static func matches(_ pattern: String, _ name: String) -> Bool {
        let p = Array(pattern), n = Array(name)
        func go(_ i: Int, _ j: Int) -> Bool {
            if i == p.count { return j == n.count }
            if p[i] == "*" { return (j...n.count).contains { go(i + 1, $0) } }
            guard j < n.count, p[i] == "?" || p[i] == n[j] else { return false }
            return go(i + 1, j + 1)
        }
        return go(0, 0)
    }

    public static func check(arguments: [String]?) -> DoctorCheck {
        let name = "bluetoothd battery plugin"
        guard let arguments else {
            return .warn(name, "not checked: the owner of org.bluez is not a bluetoothd process this user can see", fix: nil)
        }
        if isEnabled("battery", arguments: arguments) {
            return .ok(name, "loaded: straps' battery levels appear as org.bluez.Battery1.Percentage")
        }
        return .warn(name, "disabled (bluetoothd \(arguments.joined(separator: " "))): bluetoothd publishes no Battery1, so straps' battery levels are not shown",
                     fix: "remove the -P/--noplugin battery option: sudo systemctl edit bluetooth (ExecStart=), then sudo systemctl restart bluetooth")
    }
}
