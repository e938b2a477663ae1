// SPDX-License-Identifier: MIT

/// Prometheus's text format read back, for tests that scrape `/metrics`: one sample per
/// line, comments skipped. Label values here never hold escaped quotes or commas.
public struct MetricsText: Sendable {
    public struct Sample: Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    public let samples: [Sample]
    /// `# TYPE name kind` lines, by name.
    public let types: [String: String]

    public init(_ text: String) {
        var samples: [Sample] = []
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") || line.isEmpty { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let open = series.firstIndex(of: "{"), series.hasSuffix("}") {
                name = String(series[..<open])
                let body = series[series.index(after: open)..<series.index(before: series.endIndex)]
                for pair in body.split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    guard kv.count == 2 else { continue }
                    labels[String(kv[0])] = String(kv[1].dropFirst().dropLast())
                }
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
        self.samples = samples
        self.types = types
    }

    /// The value of the one sample of `name` whose labels include `labels`; nil when none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { s in s.name == name && labels.allSatisfy { k, v in s.labels[k] == v } }?.value
    }

    /// The sum over every sample of `name` whose labels include `labels`.
    public func sum(_ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { s in s.name == name && labels.allSatisfy { k, v in s.labels[k] == v } }.reduce(0) { $0 + $1.value }
    }

    public func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }
}
