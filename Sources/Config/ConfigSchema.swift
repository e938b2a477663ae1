// SPDX-License-Identifier: MIT

/// Every key the file may hold, with the example shown when its value is wrong. One
/// table, so the unknown-key check, the suggestions and the messages cannot disagree.
enum ConfigSchema {
    static let sections: [(name: String, keys: [(key: String, example: String)])] = [
        ("gateway", [
            ("id", #"id = "gym-north-1""#),
            ("state_directory", #"state_directory = "/var/lib/blegate""#),
        ]),
        ("bluetooth", [
            ("adapters", #"adapters = ["hci0"]"#),
            ("connect", #"connect = "auto""#),
            ("allow", #"allow = ["A0:9E:1A:12:34:56", "Polar H10*"]"#),
            ("deny", #"deny = ["Polar OH1*"]"#),
            ("max_links", "max_links = { hci0 = 5, default = 10 }"),
            ("max_per_adapter", "max_per_adapter = 7"),
            ("priority", #"priority = ["A0:9E:1A:12:34:56", "Polar H10*"]"#),
            ("notify", #"notify = "acquire""#),
            ("adapter_reset", "adapter_reset = false"),
            ("scan_burst", #"scan_burst = "3s""#),
            ("scan_every", #"scan_every = "10s""#),
        ]),
        ("hrv", [
            ("windows", "windows = [60, 300]"),
        ]),
        ("cache", [
            ("file", #"file = "cache.sqlite""#),
            ("retention", #"retention = "7d""#),
            ("max_size", #"max_size = "512MiB""#),
            ("delete_unsynced", "delete_unsynced = false"),
            ("encryption_key_file", #"encryption_key_file = "/etc/blegate/cache.key""#),
        ]),
        ("backend", [
            ("url", #"url = "https://backend.example/""#),
            ("token_file", #"token_file = "/etc/blegate/token""#),
            ("sink", #"sink = "wearmetrics""#),
            ("samples_path", #"samples_path = "/api/v1/samples""#),
            ("batch_size", "batch_size = 500"),
            ("interval", #"interval = "5s""#),
            ("unpaired", #"unpaired = "send""#),
        ]),
        ("status", [
            ("socket", #"socket = "/run/blegate/status.sock""#),
        ]),
        ("display", [
            ("listen", #"listen = "0.0.0.0:8080""#),
            ("gym_name", #"gym_name = "North Gym""#),
            ("room", #"room = "Spin studio""#),
            ("low_battery", "low_battery = 0.15"),
        ]),
        ("coach", [
            ("pin_file", #"pin_file = "/etc/blegate/coach-pin""#),
        ]),
        ("metrics", [
            ("listen", #"listen = "0.0.0.0:9464""#),
        ]),
        ("workouts", [
            ("idle_close", #"idle_close = "10m""#),
            ("min_duration", #"min_duration = "2m""#),
            ("open_gym_type", #"open_gym_type = "other""#),
        ]),
        ("effort", [
            ("default_max_hr", "default_max_hr = 185"),
        ]),
        // Keys of each `[[classes]]` entry.
        ("classes", [
            ("name", #"name = "Spin 07:00""#),
            ("type", #"type = "cycle""#),
            ("days", #"days = ["mon", "wed", "fri"]"#),
            ("start", #"start = "07:00""#),
            ("duration", #"duration = "45m""#),
        ]),
        // Keys of each `[members."<address or client id>"]` table.
        ("members", [
            ("name", #"name = "Ana""#),
            ("age", "age = 34"),
            ("max_hr", "max_hr = 188"),
            ("resting_hr", "resting_hr = 58"),
            ("weight_kg", "weight_kg = 64.5"),
            ("sex", #"sex = "female""#),
            ("machines", #"machines = ["C4:7C:8D:6A:21:0F"]"#),
        ]),
    ]

    static func example(_ section: String, _ key: String) -> String {
        sections.first { $0.name == section }?.keys.first { $0.key == key }?.example ?? "\(key) = ..."
    }

    static func keys(of section: String) -> [String] {
        sections.first { $0.name == section }?.keys.map(\.key) ?? []
    }

    /// The nearest known name to a mistyped one, or nil when nothing is close. A key
    /// that exists in another section is suggested with that section.
    static func suggestion(for key: String, among candidates: [String], elsewhere: [String] = []) -> String? {
        let lower = key.lowercased()
        var best: (String, Int)?
        for c in candidates {
            let d = editDistance(lower, c)
            if d < (best?.1 ?? Int.max) { best = (c, d) }
        }
        if let (c, d) = best, d <= max(2, key.count / 3) { return c }
        for dotted in elsewhere where dotted.split(separator: ".").last.map(String.init) == lower {
            return dotted
        }
        return nil
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    static var allDottedKeys: [String] {
        sections.flatMap { s in s.keys.map { s.name + "." + $0.key } }
    }
}
