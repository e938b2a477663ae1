// SPDX-License-Identifier: MIT

/// `/etc/bluetooth/main.conf` as bluetoothd reads it (a GLib key file): `[Section]`
/// headers, `Key = value` lines, `#` comments. Only what is set is kept; absent keys
/// mean bluetoothd's defaults, which `MainConfAdvice` knows.
public struct MainConf: Sendable {
    public struct Entry: Sendable, Hashable {
        public var value: String
        public var line: Int
    }

    /// A line GLib would refuse. bluetoothd then ignores the *whole* file and runs on
    /// defaults, which is worth knowing.
    public struct Malformed: Sendable, Hashable {
        public var line: Int
        public var text: String
    }

    public private(set) var sections: [String: [String: Entry]] = [:]
    public private(set) var malformed: [Malformed] = []

    public init(text: String) {
        var section: String?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmed()
            let number = index + 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    malformed.append(Malformed(line: number, text: line))
                    continue
                }
                let name = String(line.dropFirst().dropLast())
                section = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let eq = line.firstIndex(of: "="), let current = section else {
                malformed.append(Malformed(line: number, text: line))
                continue
            }
            let key = line[..<eq].trimmed()
            let value = line[line.index(after: eq)...].trimmed()
            guard !key.isEmpty else {
                malformed.append(Malformed(line: number, text: line))
                continue
            }
            sections[current, default: [:]][key] = Entry(value: value, line: number)
        }
    }

    public func value(_ section: String, _ key: String) -> Entry? { sections[section]?[key] }
}
