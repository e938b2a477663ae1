// SPDX-License-Identifier: MIT
import Testing

/// scripts/prometheus/ as promtool reads it: the alert rules, their unit tests and the
/// example configuration; and every metric the rules use against docs/metrics.md, so an
/// alert never waits on a metric nobody exports.
@Suite("Prometheus rules")
struct PrometheusRulesTests {
    static let directory = Support.projectRoot + "/scripts/prometheus"
    static let rulesPath = directory + "/blegate.rules.yml"
    static let testsPath = directory + "/blegate.rules.test.yml"
    static let metricsDocPath = Support.projectRoot + "/docs/metrics.md"
    static let hasPromtool = Support.hasTool("promtool")
    static let noPromtool: Comment = "skipped: promtool is not installed (apt-get install prometheus)"

    /// promtool run in scripts/prometheus/, where the configuration's relative paths point.
    static func promtool(_ arguments: String) async -> (out: String, status: Int32) {
        await Support.shell("cd " + Support.quote(directory) + " && promtool " + arguments)
    }

    @Test("promtool check rules accepts blegate.rules.yml", .enabled(if: hasPromtool, noPromtool))
    func checkRules() async {
        let (out, status) = await Self.promtool("check rules blegate.rules.yml")
        #expect(status == 0, "promtool check rules blegate.rules.yml:\n\(out)")
    }

    @Test("promtool test rules: each alert fires where it should and stays quiet where it should not",
          .enabled(if: hasPromtool, noPromtool))
    func testRules() async {
        let (out, status) = await Self.promtool("test rules blegate.rules.test.yml")
        #expect(status == 0, "promtool test rules blegate.rules.test.yml:\n\(out)")
    }

    @Test("promtool check config accepts prometheus.example.yml and the rule file it names",
          .enabled(if: hasPromtool, noPromtool))
    func checkConfig() async {
        let (out, status) = await Self.promtool("check config prometheus.example.yml")
        #expect(status == 0, "promtool check config prometheus.example.yml:\n\(out)")
        #expect(out.contains("blegate.rules.yml"), "the configuration names no rule file:\n\(out)")
    }

    /// `alert:` names in a rules text.
    static func alertNames(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let trimmed = String(line).trimmingWhitespace()
            guard trimmed.hasPrefix("- alert:") else { return nil }
            return String(trimmed.dropFirst("- alert:".count)).trimmingWhitespace()
        }
    }

    /// Per alert, whether the unit tests have a case where it fires (`exp_alerts:` with
    /// alerts under it) and one where it stays quiet (`exp_alerts: []`).
    static func testedCases(_ text: String) -> [String: (fires: Bool, quiet: Bool)] {
        var cases: [String: (fires: Bool, quiet: Bool)] = [:]
        let lines = text.split(separator: "\n").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        for (i, line) in lines.enumerated() where line.hasPrefix("alertname:") && i + 1 < lines.count {
            let alert = String(line.dropFirst("alertname:".count)).trimmingWhitespace()
            var seen = cases[alert] ?? (false, false)
            if lines[i + 1] == "exp_alerts: []" { seen.quiet = true }
            if lines[i + 1] == "exp_alerts:" && i + 2 < lines.count && lines[i + 2].hasPrefix("- exp_labels:") { seen.fires = true }
            cases[alert] = seen
        }
        return cases
    }

    @Test("every alert has a test case where it fires and one where it stays quiet")
    func everyAlertTested() throws {
        let rules = try #require(Support.read(Self.rulesPath))
        let tests = try #require(Support.read(Self.testsPath))
        let alerts = Self.alertNames(rules)
        #expect(alerts.count >= 10, "\(alerts)")
        let cases = Self.testedCases(tests)
        for alert in alerts {
            #expect(cases[alert]?.fires == true, "no case in blegate.rules.test.yml where \(alert) fires")
            #expect(cases[alert]?.quiet == true, "no case in blegate.rules.test.yml where \(alert) stays quiet (exp_alerts: [])")
        }
        #expect(Set(cases.keys).subtracting(alerts).isEmpty, "tests of alerts the rules do not have: \(Set(cases.keys).subtracting(alerts))")
    }

    /// The text of every `expr:` in a rules file, block scalars and continued plain
    /// scalars included (lines indented deeper than the `expr:` key).
    static func expressions(_ text: String) -> [String] {
        var found: [String] = []
        var current: (indent: Int, text: String)?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            let indent = line.prefix { $0 == " " }.count
            let trimmed = line.trimmingWhitespace()
            if let open = current {
                if trimmed.isEmpty || indent > open.indent {
                    current?.text += "\n" + trimmed
                    continue
                }
                found.append(open.text)
                current = nil
            }
            if trimmed.hasPrefix("expr:") || trimmed.hasPrefix("- expr:") {
                let value = String(trimmed.drop { $0 != ":" }.dropFirst()).trimmingWhitespace()
                current = (indent, ["|", "|-", ">", ">-"].contains(value) ? "" : value)
            }
        }
        if let open = current { found.append(open.text) }
        return found
    }

    /// The metric names in expressions, comments (`# …` to the end of a line) left out.
    static func metricNames(in expressions: [String]) -> Set<String> {
        var names: Set<String> = []
        for expression in expressions {
            for line in expression.split(separator: "\n") {
                let code = line.prefix { $0 != "#" }
                for match in code.matches(of: #/blegate_[a-z_]+/#) { names.insert(String(match.output)) }
            }
        }
        return names
    }

    /// The metrics docs/metrics.md's tables list, with their types: rows of the form
    /// | `name`[, `name`] | type | labels | what |.
    static func documentedMetrics(_ text: String) -> [String: String] {
        var metrics: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `blegate_") {
            let cells = line.split(separator: "|").map { String($0).trimmingWhitespace() }
            guard cells.count >= 2 else { continue }
            for match in cells[0].matches(of: #/`(blegate_[a-z_]+)`/#) { metrics[String(match.output.1)] = cells[1] }
        }
        return metrics
    }

    /// Names used but not documented; a histogram's `_bucket`, `_sum` and `_count` count
    /// as the histogram.
    static func undocumented(_ used: Set<String>, _ documented: [String: String]) -> [String] {
        used.filter { name in
            if documented[name] != nil { return false }
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                if documented[String(name.dropLast(suffix.count))] == "histogram" { return false }
            }
            return true
        }.sorted()
    }

    @Test("every metric the rules use is in docs/metrics.md")
    func metricsDocumented() throws {
        let rules = try #require(Support.read(Self.rulesPath))
        let doc = try #require(Support.read(Self.metricsDocPath))
        let expressions = Self.expressions(rules)
        #expect(expressions.count == Self.alertNames(rules).count, "an alert whose expr was not found: \(expressions)")
        let used = Self.metricNames(in: expressions)
        #expect(used.count >= 10, "\(used.sorted())")
        let documented = Self.documentedMetrics(doc)
        #expect(documented.count >= 30, "\(documented.keys.sorted())")
        let missing = Self.undocumented(used, documented)
        #expect(missing.isEmpty, "used in scripts/prometheus/blegate.rules.yml, not in docs/metrics.md: \(missing)")
    }

    @Test("the name check reads block scalars and catches misspelt and non-histogram suffixed names")
    func nameCheckCatchesMistakes() {
        let rules = """
            groups:
              - name: g
                rules:
                  - alert: A
                    expr: blegate_outbox_pending_records > 0 # blegate_in_a_comment
                    for: 1m
                  - alert: B
                    expr: |
                      histogram_quantile(0.99, sum by (le) (rate(blegate_server_http_request_duration_seconds_bucket[5m])))
                        > blegate_strap_batery_ratio
                    for: 1m
                  - alert: C
                    expr: >-
                      rate(blegate_reconnects_total_count[5m])
                    for: 1m
            """
        let doc = """
            | `blegate_outbox_pending_records` | gauge | | |
            | `blegate_server_http_request_duration_seconds` | histogram | `route` | |
            | `blegate_cache_filesystem_free_bytes`, `blegate_reconnects_total` | counter | | |
            """
        let expressions = Self.expressions(rules)
        #expect(expressions.count == 3, "\(expressions)")
        let used = Self.metricNames(in: expressions)
        #expect(!used.contains("blegate_in_a_comment"))
        let documented = Self.documentedMetrics(doc)
        #expect(documented["blegate_cache_filesystem_free_bytes"] == "counter")
        #expect(Self.undocumented(used, documented) == ["blegate_reconnects_total_count", "blegate_strap_batery_ratio"])
    }
}
